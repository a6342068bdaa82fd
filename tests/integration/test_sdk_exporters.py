"""The real OpenTelemetry SDK exporters, configured only by OTEL_EXPORTER_OTLP_*."""

from __future__ import annotations

import json

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

from tests.integration.harness import Collector


def make_exporter(protocol: str) -> SpanExporter:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpExporter,
    )

    return HttpExporter()


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_sdk_exporter_delivers_every_span_once_with_attributes(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, protocol: str, compression: str | None
) -> None:
    port = collector.service.grpc_port if protocol == "grpc" else collector.service.http_port
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer {collector.key}")
    if compression is not None:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", compression)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(make_exporter(protocol)))
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span(
        "badge.run", attributes={"badge.task.id": "t-sdk", "badge.run.success": True}
    ):
        with tracer.start_as_current_span(
            "chat model",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 12,
                "gen_ai.request.temperature": 0.5,
                "gen_ai.response.finish_reasons": ("stop", "length"),
                "flag": True,
            },
        ):
            pass
    provider.shutdown()
    rows = collector.query("SELECT name, encoded FROM spans ORDER BY name")
    assert [name for name, _ in rows] == ["badge.run", "chat model"]
    chat = Span.FromString(rows[1][1])
    values = {kv.key: kv.value for kv in chat.attributes}
    assert values["gen_ai.usage.input_tokens"].int_value == 12
    assert values["gen_ai.request.temperature"].double_value == 0.5
    assert [
        v.string_value for v in values["gen_ai.response.finish_reasons"].array_value.values
    ] == [
        "stop",
        "length",
    ]
    assert values["flag"].bool_value is True


@pytest.mark.parametrize("gzip", [False, True])
def test_hand_built_otlp_json_is_stored(collector: Collector, gzip: bool) -> None:
    body = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "json-agent"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "hand"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",
                                "spanId": "EEE19B7EC3C1B174",
                                "name": "badge.run",
                                "kind": "SPAN_KIND_SERVER",
                                "startTimeUnixNano": "1544712660000000000",
                                "end_time_unix_nano": 1544712661000000000,
                                "attributes": [
                                    {"key": "n", "value": {"intValue": "42"}},
                                    {"key": "b", "value": {"bytesValue": "AAEC"}},
                                ],
                                "status": {"code": 2},
                                "unknownField": {"ignored": True},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    response = collector.post(json.dumps(body).encode(), content_type="application/json", gzip=gzip)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {}
    rows = collector.query("SELECT trace_id, span_id, kind, status_code, encoded FROM spans")
    assert len(rows) == 1
    trace_id, span_id, kind, status, encoded = rows[0]
    assert (trace_id, span_id, kind, status) == (
        "5b8efff798038103d269b633813fc60c",
        "eee19b7ec3c1b174",
        2,
        2,
    )
    stored = {kv.key: kv.value for kv in Span.FromString(encoded).attributes}
    assert stored["n"].int_value == 42
    assert stored["b"].bytes_value == b"\x00\x01\x02"
