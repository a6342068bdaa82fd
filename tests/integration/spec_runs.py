"""What the spec-alone certificate tests send and fetch (spec_checks.py checks
it): runs built span by span, so the test knows every byte the spans digest
covers, and the keyless reads of a real collector. Written from CERTS.md,
RUNS.md and OTLP.md; nothing here comes from the project's helpers but the
running collector itself."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rfc8785
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.integration.harness import Collector, running_collector
from tests.integration.spec_checks import check_jwks

# -- spans: what the test sends, and the canonical list it expects back ------


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        array = AnyValue()
        array.array_value.values.extend(any_value(v) for v in value)
        return array
    if isinstance(value, dict):
        kvlist = AnyValue()
        kvlist.kvlist_value.values.extend(
            KeyValue(key=k, value=any_value(v)) for k, v in value.items()
        )
        return kvlist
    return AnyValue(string_value=value)


@dataclass
class SentSpan:
    trace_id: bytes
    span_id: bytes
    name: str
    parent: bytes = b""
    start_ns: int = 1_790_000_001_000_000_000
    end_ns: int = 1_790_000_002_000_000_000
    kind: int = 1  # INTERNAL
    status_code: int = 0
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def proto(self) -> Span:
        span = Span(
            trace_id=self.trace_id,
            span_id=self.span_id,
            parent_span_id=self.parent,
            name=self.name,
            kind=self.kind,  # type: ignore[arg-type]
            start_time_unix_nano=self.start_ns,
            end_time_unix_nano=self.end_ns,
        )
        span.attributes.extend(
            KeyValue(key=k, value=any_value(v)) for k, v in self.attributes.items()
        )
        span.status.code = self.status_code  # type: ignore[assignment]
        span.status.message = self.status_message
        for name, attributes in self.events:
            event = span.events.add(name=name, time_unix_nano=self.start_ns)
            event.attributes.extend(
                KeyValue(key=k, value=any_value(v)) for k, v in attributes.items()
            )
        return span


def export_body(spans: Sequence[SentSpan], service: str) -> bytes:
    message = ExportTraceServiceRequest()
    resource = message.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name", value=any_value(service)))
    scope = resource.scope_spans.add()
    scope.spans.extend(span.proto() for span in spans)
    return message.SerializeToString()


def attribute_json(value: Any) -> Any:
    """Section 2: strings, booleans, floats, arrays and objects as JSON;
    integers as numbers when |n| < 2^53, else decimal strings."""
    if isinstance(value, bool) or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else str(value)
    if isinstance(value, list):
        return [attribute_json(v) for v in value]
    return {k: attribute_json(v) for k, v in value.items()}


def canonical_spans(spans: Sequence[SentSpan]) -> bytes:
    """Section 2: the spans digest's list, ordered by span id, in RFC 8785 form."""
    listed = [
        {
            "span_id": s.span_id.hex(),
            "parent_span_id": s.parent.hex() if s.parent else None,
            "name": s.name,
            "kind": s.kind,
            "start_ns": str(s.start_ns),
            "end_ns": str(s.end_ns),
            "status_code": s.status_code,
            "attributes": {k: attribute_json(v) for k, v in s.attributes.items()},
        }
        for s in sorted(spans, key=lambda s: s.span_id.hex())
    ]
    return rfc8785.dumps(listed)


# -- a collector and its keyless reads ---------------------------------------


API = "/api/v1"
SECRET = "sekrit-7f3a"  # every text a span or grader writes below carries it


@contextmanager
def signed_collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    """A collector signing with the key file tmp_path/keys/signing.pem."""
    key = tmp_path / "keys" / "signing.pem"
    with running_collector(tmp_path, database_url=database_url, signing_key=str(key)) as running:
        yield running


def get(c: Collector, path: str, key: str | None = None, **params: Any) -> Any:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    # params=None, not {}: httpx drops a query already in `path` for an empty dict
    return c.http.get(f"{c.http_url}{path}", params=params or None, headers=headers)


def keys_of(c: Collector) -> Any:
    reply = get(c, "/.well-known/jwks.json")
    assert reply.status_code == 200
    return check_jwks(reply.json())


def envelope(c: Collector, path: str) -> bytes:
    reply = get(c, f"{API}{path}/certificate")  # keyless: the summaries are
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].split(";")[0] == "application/json"
    body: bytes = reply.content
    return body


def run_spans(
    task: str, root: Mapping[str, Any] | None = None, *, extra: Mapping[str, Any] | None = None
) -> list[SentSpan]:
    """A run: root > invoke_agent > chat + execute_tool, every text a span
    writes carrying SECRET."""
    trace = os.urandom(16)
    ids = [os.urandom(8) for _ in range(4)]
    return [
        SentSpan(
            trace,
            ids[0],
            "badge.run",
            attributes={
                "badge.task.id": task,
                "badge.run.success": True,
                "badge.output": f"{SECRET} output",
                "badge.expected_output": f"{SECRET} expected",
                **(root or {}),
            },
            events=[("badge.request", {"body": f"{SECRET} request"})],
        ),
        SentSpan(
            trace,
            ids[1],
            f"invoke_agent {SECRET}",
            parent=ids[0],
            attributes={"gen_ai.operation.name": "invoke_agent", **(extra or {})},
        ),
        SentSpan(
            trace,
            ids[2],
            "chat m",
            parent=ids[1],
            kind=3,  # CLIENT
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 7,
                "gen_ai.prompt": f"{SECRET} prompt",
                "gen_ai.completion": f"{SECRET} completion",
            },
        ),
        SentSpan(
            trace,
            ids[3],
            "execute_tool lookup",
            parent=ids[1],
            status_code=2,
            status_message=f"{SECRET} status message",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
                "input.value": f"{SECRET} tool input",
            },
        ),
    ]


def send(c: Collector, spans: list[SentSpan], service: str = "spec-agent", key: str = "") -> None:
    reply = c.http.post(
        f"{c.http_url}/v1/traces",
        content=export_body(spans, service),
        headers={
            "content-type": "application/x-protobuf",
            "authorization": f"Bearer {key or c.key}",
        },
    )
    assert reply.status_code == 200, reply.text


def run_id(c: Collector, spans: list[SentSpan]) -> str:
    return str(c.query("SELECT id FROM runs WHERE trace_id = ?", spans[0].trace_id.hex())[0][0])


def agent_id(c: Collector, name: str) -> str:
    return str(c.query("SELECT id FROM agents WHERE name = ?", name)[0][0])


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
