"""Both doors drive one export (collector.ingest.path.Ingest.export): every
export is counted once, by how it ended, whichever door took it; the answer
is in the codec the request chose; the steps' CPU is counted."""

from __future__ import annotations

import json

import grpc
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from bench.support.otlp import agent_run
from tests.integration.harness import Collector
from tests.integration.outages import metric


def exports(c: Collector, transport: str, status: str) -> float:
    return metric(c, "badge_export_requests_total", transport=transport, status=status)


def test_each_export_is_counted_once_by_how_it_ended_at_either_door(
    collector: Collector,
) -> None:
    c = collector
    body = agent_run(service="one-path").SerializeToString()
    ok = c.post(body)
    assert ok.status_code == 200 and ok.headers["content-type"] == "application/x-protobuf"
    assert ExportTraceServiceResponse.FromString(ok.content) == ExportTraceServiceResponse()
    assert c.post(body, content_type="text/plain").status_code == 415
    assert c.post(body, key="bad-key").status_code == 401
    response, _ = c.export_grpc(agent_run(service="one-path").SerializeToString())
    assert response is not None
    with pytest.raises(grpc.RpcError) as refused:
        c.export_grpc(b"\xff\xff\xff not protobuf")
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    counted = {
        (transport, status): exports(c, transport, status)
        for transport in ("http", "grpc")
        for status in ("ok", "media", "unauthenticated", "bad_request")
    }
    assert {key: n for key, n in counted.items() if n} == {
        ("http", "ok"): 1,
        ("http", "media"): 1,
        ("http", "unauthenticated"): 1,
        ("grpc", "ok"): 1,
        ("grpc", "bad_request"): 1,
    }


def test_a_json_request_is_answered_in_json_success_and_refusal_alike(
    collector: Collector,
) -> None:
    c = collector
    accepted = c.post(b'{"resourceSpans": []}', content_type="application/json; charset=utf-8")
    assert accepted.status_code == 200 and accepted.headers["content-type"] == "application/json"
    assert accepted.json() == {}
    malformed = c.post(b'{"resourceSpans": 7}', content_type="application/json")
    assert malformed.status_code == 400
    assert malformed.headers["content-type"] == "application/json"
    assert json.loads(malformed.content)["code"] == 3
    binary = c.post(b"\xff\xff", content_type="application/x-protobuf")
    assert binary.status_code == 400
    assert status_pb2.Status.FromString(binary.content).code == 3


def test_the_steps_of_a_stored_export_count_their_cpu(collector: Collector) -> None:
    c = collector
    assert c.post(agent_run(service="timed").SerializeToString()).status_code == 200
    for stage in ("decode", "recognise", "rows", "assemble", "write"):
        assert metric(c, "badge_ingest_cpu_seconds_total", stage=stage) > 0, stage
