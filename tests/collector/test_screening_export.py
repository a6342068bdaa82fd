"""The screener's retries (docs/screening.md "When the collector or its database fails"):
what OTLP/HTTP says to retry is retried, honouring Retry-After, for the window; what
retrying cannot fix is not; and an outage is one window, not one per batch. Against a
real HTTP server on loopback that answers as told."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from collector.api_client import ApiClient, retry_after_s
from collector.screening.export import RetryingExporter


class Script:
    """The answers a server gives, in order; the last one repeats."""

    def __init__(self, *answers: tuple[int, dict[str, str], bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.times: list[float] = []

    def next(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        self.requests.append(body)
        self.times.append(time.monotonic())
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@contextmanager
def server(script: Script) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            status, headers, body = script.next(self.rfile.read(length))
            self.send_response(status)
            for name, value in {**headers, "content-length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def spans(count: int) -> list[ReadableSpan]:
    tracer = TracerProvider().get_tracer("t")
    made = []
    for i in range(count):
        span = tracer.start_span(f"s{i}")
        span.end()
        made.append(span)
    return made  # type: ignore[return-value]


OK = (200, {"content-type": "application/x-protobuf"}, b"")
BUSY = (503, {"retry-after": "1"}, b"")


@pytest.mark.timing
def test_a_503_with_retry_after_is_retried_as_it_says_until_the_spans_are_taken() -> None:
    script = Script(BUSY, BUSY, OK)
    with server(script) as url:
        exporter = RetryingExporter(f"{url}/v1/traces", {"authorization": "Bearer k"}, 10.0)
        assert exporter.export(spans(3)) is SpanExportResult.SUCCESS
        exporter.shutdown()
    assert (exporter.exported, exporter.lost) == (3, 0)
    assert len(script.requests) == 3 and script.times[2] - script.times[0] >= 1.9
    sent = ExportTraceServiceRequest.FromString(script.requests[-1])
    assert sum(len(s.spans) for r in sent.resource_spans for s in r.scope_spans) == 3


def test_a_refusal_is_not_retried_and_a_partial_success_counts_what_was_rejected() -> None:
    partial = ExportTraceServiceResponse()
    partial.partial_success.rejected_spans = 1
    partial.partial_success.error_message = "agent deleted"
    script = Script((401, {}, b"no"), (200, {}, partial.SerializeToString()))
    with server(script) as url:
        exporter = RetryingExporter(f"{url}/v1/traces", {}, 10.0)
        assert exporter.export(spans(2)) is SpanExportResult.FAILURE
        assert exporter.export(spans(2)) is SpanExportResult.FAILURE
        exporter.shutdown()
    assert len(script.requests) == 2
    assert (exporter.exported, exporter.lost) == (1, 3)
    assert exporter.reasons == {"HTTP 401": 2, "agent deleted": 1}


@pytest.mark.timing
def test_an_outage_longer_than_the_window_is_waited_out_once_not_per_batch() -> None:
    script = Script((503, {}, b""))
    with server(script) as url:
        exporter = RetryingExporter(f"{url}/v1/traces", {}, 0.0)  # at least 10 s
        assert exporter.retry_s == 10.0
        started = time.monotonic()
        assert exporter.export(spans(1)) is SpanExportResult.FAILURE
        first = time.monotonic() - started
        tries = len(script.requests)
        assert exporter.export(spans(1)) is SpanExportResult.FAILURE
        exporter.shutdown()
    assert first >= 9.0 and tries >= 4  # backed off 0.5, 1, 2, 4 s ... within 10 s
    assert len(script.requests) == tries + 1  # the next batch: one try, the outage goes on
    assert exporter.lost == 2


@pytest.mark.timing
def test_no_answer_at_all_is_retried_until_the_server_is_there() -> None:
    script = Script(OK)
    with server(script) as url:
        pass  # the port is free again: nothing listens
    port = int(url.rsplit(":", 1)[1])
    client = ApiClient(url, None, retry_s=20.0)

    def listen_later() -> None:
        time.sleep(1.5)
        class_server = ThreadingHTTPServer(("127.0.0.1", port), _Fine)
        threading.Thread(target=class_server.serve_forever, daemon=True).start()
        holder.append(class_server)

    holder: list[ThreadingHTTPServer] = []
    thread = threading.Thread(target=listen_later)
    thread.start()
    try:
        reply = client.get("/agents")
        assert reply.status == 200 and reply.unanswered_before is True
    finally:
        thread.join()
        client.close()
        for started in holder:
            started.shutdown()
            started.server_close()


class _Fine(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), ("0", 0.0), ("-5", 0.0), ("nan", None), ("soon", None), (None, None)],
)
def test_retry_after_reads_seconds_and_refuses_nonsense(
    value: str | None, expected: float | None
) -> None:
    assert retry_after_s({} if value is None else {"retry-after": value}) == expected


def test_retry_after_reads_an_http_date() -> None:
    later = formatdate(time.time() + 30, usegmt=True)
    seconds = retry_after_s({"retry-after": later})
    assert seconds is not None and 25 <= seconds <= 31
