"""The `badge.run` root spans a screening records (SCREEN.md section 4), exported over OTLP.

The screener records its runs the way any agent would, through the real
OpenTelemetry SDK and OTLP/HTTP with the key it was given (the exporter is
`export.RetryingExporter`: it rides out a collector's outage), so
the collector reads a screened run by the rules of every other run (RUNS.md)
and an agent's own spans, sent under the same trace, join it. Texts are cut
at the collector's value limit here, because a longer value would only be
cut there after crossing the network. Imports nothing of the collector's
server side.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from collector.screening.answers import Answer
from collector.screening.export import RetryingExporter
from collector.screening.plan import Dispatch, Screening
from scoring.graders import Grade, expected_text

VALUE_LIMIT_BYTES = 16 * 1024  # the collector's string limit (docs/otlp.md "Limits")


def cut(text: str, limit: int = VALUE_LIMIT_BYTES) -> str:
    """At most `limit` UTF-8 bytes, whole characters; a lone surrogate becomes "?" (not UTF-8)."""
    if text.isascii():
        return text if len(text) <= limit else text[:limit]
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[:limit].decode("utf-8", errors="ignore")


class Recorder:
    """One screening's tracer provider: its resource names the agent, its exporter the key."""

    def __init__(
        self,
        screening: Screening,
        collector_url: str,
        key: str | None,
        *,
        retry_s: float,
        dispatches: int,
    ) -> None:
        self.screening = screening
        attributes: dict[str, str] = {
            "service.name": screening.agent,
            "badge.agent.id": screening.agent,
        }
        if screening.version is not None:
            attributes["service.version"] = screening.version
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self.delivery = RetryingExporter(
            f"{collector_url.rstrip('/')}/v1/traces", headers, retry_s=retry_s
        )
        self.provider = TracerProvider(resource=Resource.create(attributes))
        # Room for every root (and a Python target's spans) while an outage holds the
        # exports back: the SDK's default 2,048 drops past it, and a deque takes
        # memory only for what it holds.
        queue = max(2048, 4 * dispatches)
        self.provider.add_span_processor(
            BatchSpanProcessor(
                self.delivery,
                max_queue_size=queue,
                schedule_delay_millis=200,
                max_export_batch_size=512,
            )
        )
        self.tracer = self.provider.get_tracer("badge-collector.screening")

    def install_global(self) -> bool:
        """Be the program's tracer provider unless it has set one: a Python target's spans
        then join its runs (SCREEN.md section 3). True when installed."""
        if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            return False
        trace.set_tracer_provider(self.provider)
        return True

    def start(self, dispatch: Dispatch, url: str | None, start_ns: int) -> Span:
        """The root, started just before the request: its duration is the run's latency.
        `url` is url.full (userinfo and query removed), None for a Python target."""
        s, task = self.screening, dispatch.task
        attributes: dict[str, str | int | float | bool] = {
            "badge.task.id": task.id,
            "badge.run.id": dispatch.run_key,
            "badge.screening.id": s.screening_id,
            "badge.screening.round": dispatch.round,
            "badge.suite.name": s.suite.name,
            "badge.suite.digest": s.suite.digest,
            "badge.grader": task.grader,
        }
        if s.version is not None:
            attributes["badge.agent.version"] = s.version
        if task.has_expected:
            attributes["badge.expected_output"] = cut(expected_text(task.expected_output))
        if url is not None:
            attributes["http.request.method"] = "POST"
            attributes["url.full"] = url
        span = self.tracer.start_span(
            "badge.run", kind=SpanKind.CLIENT, attributes=attributes, start_time=start_ns
        )
        span.add_event("badge.request", {"body": cut(dispatch.body)}, timestamp=start_ns)
        return span

    def finish(self, span: Span, answer: Answer, grade: Grade, end_ns: int) -> None:
        """The outcome on the root, then its end at the answer's last byte (`end_ns`)."""
        attributes: dict[str, str | int | float | bool] = {
            "badge.run.success": grade.passed,
            "badge.run.status": answer.run_status,
            "badge.grade.score": grade.score,
        }
        if answer.output is not None:
            attributes["badge.output"] = cut(answer.output)
        if answer.input_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = answer.input_tokens
        if answer.output_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = answer.output_tokens
        if answer.cost_usd is not None:
            attributes["badge.cost.usd"] = answer.cost_usd
        if answer.http_status is not None:
            attributes["http.response.status_code"] = answer.http_status
        if answer.error_class != "none":
            attributes["error.type"] = answer.error_class
            span.set_status(Status(StatusCode.ERROR, cut(answer.detail or answer.error_class)))
        span.set_attributes(attributes)
        if answer.exception_type is not None:
            span.add_event(
                "exception",
                {
                    "exception.type": answer.exception_type,
                    "exception.message": cut(answer.detail or ""),
                    "exception.stacktrace": cut(answer.stacktrace or ""),
                },
                timestamp=end_ns,
            )
        response: dict[str, str | int] = {}
        if answer.http_status is not None:
            response["status"] = answer.http_status
        if answer.body is not None:
            response["body"] = cut(answer.body)
        if answer.detail is not None and answer.exception_type is None:
            response["detail"] = cut(answer.detail)
        span.add_event("badge.response", response, timestamp=end_ns)
        span.end(end_time=end_ns)

    def close(self) -> RetryingExporter:
        """Flush every root to the collector (retried through an outage for the exporter's
        `retry_s`) and stop; the exporter's counts say what was delivered."""
        self.provider.force_flush()
        self.provider.shutdown()
        return self.delivery
