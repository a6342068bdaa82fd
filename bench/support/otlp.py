"""Small builders for OTLP requests in tests (protobuf messages, JSON dicts)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from collector.assembly.membership import FLAG_HAS_IS_REMOTE

# Span times of the built requests: a real date, since times before 2000 are
# impossible times the collector sets aside (collector/assembly/clock.py).
EPOCH_NS = 1_790_000_000 * 10**9


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, list):
        result = AnyValue()
        result.array_value.values.extend(any_value(v) for v in value)
        return result
    if isinstance(value, dict):
        result = AnyValue()
        result.kvlist_value.values.extend(
            KeyValue(key=k, value=any_value(v)) for k, v in value.items()
        )
        return result
    return AnyValue(string_value=str(value))


def attrs(mapping: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in mapping.items()]


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return os.urandom(8)


def span(
    trace_id: bytes,
    span_id: bytes,
    name: str,
    *,
    parent: bytes = b"",
    start: int = EPOCH_NS + 1_000_000_000,
    end: int = EPOCH_NS + 2_000_000_000,
    attributes: Mapping[str, Any] | None = None,
    status: int = 0,
    flags: int = 0,
    events: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> Span:
    result = Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        flags=flags,
        kind=Span.SPAN_KIND_INTERNAL,
    )
    result.attributes.extend(attrs(attributes or {}))
    result.status.code = status
    for event_name, event_attrs in events:
        event = result.events.add(name=event_name, time_unix_nano=start)
        event.attributes.extend(attrs(event_attrs))
    return result


def chat_awaiting_its_root(trace_id: bytes, root: bytes) -> Span:
    """An LLM call whose parent, the run's root, is local (flags say so) and
    has not arrived: its run stays open until the root comes or times out."""
    return span(
        trace_id,
        new_span_id(),
        "chat",
        parent=root,
        flags=FLAG_HAS_IS_REMOTE,
        attributes={"gen_ai.operation.name": "chat"},
    )


def request(
    spans: Sequence[Span],
    service: str = "agent-a",
    resource: Mapping[str, Any] | None = None,
) -> ExportTraceServiceRequest:
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(attrs({"service.name": service, **(resource or {})}))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tests"
    scope_spans.spans.extend(spans)
    return message


def agent_run(
    task: str = "t1",
    *,
    service: str = "agent-a",
    success: bool = True,
    latency_ns: int = 500_000_000,
    cost: float | None = None,
    tools: int = 1,
    error: bool = False,
) -> ExportTraceServiceRequest:
    """A GenAI-convention run: root > invoke_agent > chat + execute_tool x N."""
    trace_id = new_trace_id()
    root, agent = new_span_id(), new_span_id()
    root_attrs: dict[str, Any] = {"badge.task.id": task, "badge.run.success": success}
    if cost is not None:
        root_attrs["badge.cost.usd"] = cost
    spans = [
        span(
            trace_id,
            root,
            "badge.run",
            attributes=root_attrs,
            start=EPOCH_NS + 1_000_000_000,
            end=EPOCH_NS + 1_000_000_000 + latency_ns,
            status=2 if error else 0,
        ),
        span(
            trace_id,
            agent,
            "invoke_agent a",
            parent=root,
            attributes={"gen_ai.operation.name": "invoke_agent"},
        ),
        span(
            trace_id,
            new_span_id(),
            "chat m",
            parent=agent,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 10,
            },
        ),
    ]
    for i in range(tools):
        spans.append(
            span(
                trace_id,
                new_span_id(),
                f"execute_tool t{i}",
                parent=agent,
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": f"t{i}"},
            )
        )
    return request(spans, service)


def simple_trace(
    service: str = "agent-a", task: str = "t1", tools: int = 1
) -> ExportTraceServiceRequest:
    return agent_run(task, service=service, tools=tools)
