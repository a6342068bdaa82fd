"""Realistic agent spans for benchmarks: ~1 KB each, GenAI attributes and bodies."""

from __future__ import annotations

import json
import os
import random
import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def _kv(key: str, value: object) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def run_spans(rnd: random.Random, base_ns: int) -> list[Span]:
    """One run: root > invoke_agent > (chat, execute_tool) x 3 + final chat = 9 spans."""
    trace_id = os.urandom(16)
    root_id, agent_id = os.urandom(8), os.urandom(8)
    spans: list[tuple[bytes, bytes, str, dict[str, object]]] = [
        (
            root_id,
            b"",
            "badge.run",
            {
                "badge.task.id": f"task-{rnd.randint(1, 20)}",
                "badge.run.success": rnd.random() > 0.2,
            },
        ),
        (
            agent_id,
            root_id,
            "invoke_agent support",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.provider.name": "openai",
            },
        ),
    ]
    for turn in range(4):
        message = json.dumps(
            [
                {
                    "role": "user",
                    "parts": [
                        {"type": "text", "content": f"Where is my order A{turn}? " + "x" * 467}
                    ],
                }
            ]
        )
        spans.append(
            (
                os.urandom(8),
                agent_id,
                "chat gpt-4.1-mini",
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4.1-mini",
                    "gen_ai.response.model": "gpt-4.1-mini",
                    "gen_ai.usage.input_tokens": rnd.randint(50, 900),
                    "gen_ai.usage.output_tokens": rnd.randint(5, 200),
                    "gen_ai.request.temperature": 0.2,
                    "gen_ai.response.id": f"resp_{turn:04d}",
                    "gen_ai.input.messages": message,
                    "gen_ai.output.messages": message.replace("user", "assistant"),
                },
            )
        )
        if turn < 3:
            spans.append(
                (
                    os.urandom(8),
                    agent_id,
                    "execute_tool lookup_order",
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "lookup_order",
                        "gen_ai.tool.call.id": f"call_{turn}",
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.arguments": json.dumps({"order_id": f"A{turn}"})
                        + " " * 200,
                        "gen_ai.tool.call.result": json.dumps({"status": "shipped"}) + " " * 300,
                    },
                )
            )
    result = []
    for offset, (span_id, parent, name, attributes) in enumerate(spans):
        span = Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent,
            name=name,
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=base_ns + offset * 1000,
            end_time_unix_nano=base_ns + 10_000_000 + offset * 1000,
        )
        span.attributes.extend(_kv(k, v) for k, v in attributes.items())
        result.append(span)
    return result


def build_requests(count: int, spans_per_request: int = 512, seed: int = 7) -> list[bytes]:
    """Requests of whole runs that start from now on, as an agent's do.

    Start times used to be one fixed instant for every build: each round of
    bench/ingest.py --growing then put its runs between the earlier rounds'
    in the (agent, start) index, a random page each, which no deployment
    does: its runs start later and later.
    """
    rnd = random.Random(seed)
    bodies = []
    base = time.time_ns()
    for _ in range(count):
        request = ExportTraceServiceRequest()
        rs = request.resource_spans.add()
        rs.resource.attributes.extend([_kv("service.name", "bench-agent")])
        scope = rs.scope_spans.add()
        scope.scope.name = "bench"
        while len(scope.spans) < spans_per_request:
            base += 50_000  # 50 us: a round never reaches into the next one
            scope.spans.extend(run_spans(rnd, base)[: spans_per_request - len(scope.spans)])
        bodies.append(request.SerializeToString())
    return bodies
