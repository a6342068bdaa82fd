"""Bad input gets a clear answer and loses nothing (docs/otlp.md), through real sockets."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from bench.support.otlp import new_span_id, new_trace_id, request, simple_trace, span
from collector.storage.engine import open_database
from collector.storage.keys import KeyStore
from tests.integration.harness import Collector, running_collector
from tests.integration.outages import metric
from tests.waiting import running, wait_for

BASELINE_SPANS = 4


@pytest.fixture
def loaded(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    """A collector holding one accepted run, with small limits for the tests."""
    with running_collector(
        tmp_path,
        max_body_bytes=256 * 1024,
        max_spans_per_request=50,
        database_url=database_url,
    ) as c:
        assert c.post(simple_trace().SerializeToString()).status_code == 200
        assert c.span_count() == BASELINE_SPANS
        yield c
        # After every bad request: earlier spans intact and the server still serves.
        assert c.span_count() >= BASELINE_SPANS
        assert c.post(simple_trace().SerializeToString()).status_code == 200


def status_of(response_body: bytes) -> status_pb2.Status:
    return status_pb2.Status.FromString(response_body)


def grpc_error(c: Collector, body: bytes, **kwargs: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        c.export_grpc(body, **kwargs)  # type: ignore[arg-type]
    error: grpc.RpcError = info.value
    return error


def test_malformed_protobuf_is_400_and_invalid_argument(loaded: Collector) -> None:
    reply = loaded.post(b"\xff\xff\xff garbage")
    assert reply.status_code == 400
    assert "malformed protobuf" in status_of(reply.content).message
    error = grpc_error(loaded, b"\xff\xff\xff garbage")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_malformed_json_is_400_with_json_status(loaded: Collector) -> None:
    reply = loaded.post(b"{not json", content_type="application/json")
    assert reply.status_code == 400
    assert "malformed JSON" in reply.json()["message"]


def test_wrong_content_type_is_415(loaded: Collector) -> None:
    reply = loaded.post(b"{}", content_type="text/plain")
    assert reply.status_code == 415
    assert "unsupported content type" in reply.json()["message"]


def test_content_type_parameters_are_allowed(loaded: Collector) -> None:
    reply = loaded.post(b"{}", content_type="application/json; charset=utf-8")
    assert reply.status_code == 200


def test_wrong_method_is_405(loaded: Collector) -> None:
    reply = loaded.http.get(f"{loaded.http_url}/v1/traces")
    assert reply.status_code == 405
    assert reply.headers["allow"] == "POST"


def test_unknown_encoding_is_415(loaded: Collector) -> None:
    reply = loaded.post(b"x", headers={"content-encoding": "br"})
    assert reply.status_code == 415


def test_broken_gzip_is_400(loaded: Collector) -> None:
    broken = gzip.compress(simple_trace().SerializeToString())[:-12]
    reply = loaded.post(broken, headers={"content-encoding": "gzip"})
    assert reply.status_code == 400
    assert "gzip" in status_of(reply.content).message


def test_gzip_bomb_is_413(loaded: Collector) -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))  # 64 MiB behind ~64 KiB
    reply = loaded.post(bomb, headers={"content-encoding": "gzip"})
    assert reply.status_code == 413


def test_body_over_the_limit_is_413_and_resource_exhausted(loaded: Collector) -> None:
    big = request([span(new_trace_id(), new_span_id(), "x", attributes={"blob": "a" * 300_000})])
    body = big.SerializeToString()
    assert loaded.post(body).status_code == 413
    assert grpc_error(loaded, body).code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_too_many_spans_is_413_and_resource_exhausted(loaded: Collector) -> None:
    trace_id = new_trace_id()
    body = request([span(trace_id, new_span_id(), f"s{i}") for i in range(51)]).SerializeToString()
    reply = loaded.post(body)
    assert reply.status_code == 413
    assert "51 spans" in status_of(reply.content).message
    error = grpc_error(loaded, body)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert loaded.span_count() == BASELINE_SPANS


@pytest.mark.parametrize("door", ["http", "grpc"])
def test_invalid_spans_are_partial_success_and_valid_ones_stored(
    loaded: Collector, door: str
) -> None:
    trace_id = new_trace_id()
    spans = [
        span(trace_id, new_span_id(), "valid"),
        span(b"\0" * 16, new_span_id(), "zero trace id"),
        span(trace_id[:8], new_span_id(), "short trace id"),
        span(trace_id, b"\0" * 8, "zero span id"),
        span(trace_id, new_span_id(), "ends before it starts", start=5, end=4),
        span(trace_id, new_span_id(), "too deep", attributes={"deep": [[[[[[[[[["x"]]]]]]]]]]}),
    ]
    body = request(spans).SerializeToString()
    if door == "http":
        reply = loaded.post(body)
        assert reply.status_code == 200
        result = ExportTraceServiceResponse.FromString(reply.content)
    else:
        result, _ = loaded.export_grpc(body)
        result = ExportTraceServiceResponse.FromString(result)
    assert result.partial_success.rejected_spans == 5
    assert "trace_id" in result.partial_success.error_message
    assert "nested deeper" in result.partial_success.error_message
    assert loaded.query("SELECT name FROM spans WHERE trace_id = ?", trace_id.hex()) == [("valid",)]


def test_missing_and_unknown_keys_are_refused(loaded: Collector) -> None:
    body = simple_trace().SerializeToString()
    assert loaded.post(body, key=None).status_code == 401
    assert loaded.post(body, key="bdg_not-a-key").status_code == 401
    assert grpc_error(loaded, body, key=None).code() == grpc.StatusCode.UNAUTHENTICATED
    assert loaded.span_count() == BASELINE_SPANS


def test_x_api_key_header_is_accepted(loaded: Collector) -> None:
    body = simple_trace().SerializeToString()
    reply = loaded.post(body, key=None, headers={"x-api-key": loaded.key})
    assert reply.status_code == 200


def test_revoked_key_is_refused_and_its_spans_stay(loaded: Collector) -> None:
    key = loaded.service.keys.create("owner-r")
    assert loaded.post(simple_trace().SerializeToString(), key=key).status_code == 200
    prefix = key[:12]
    assert loaded.service.keys.revoke(prefix) == 1
    assert loaded.post(simple_trace().SerializeToString(), key=key).status_code == 401
    assert loaded.query("SELECT count(*) FROM spans WHERE owner = 'owner-r'") == [(4,)]


def test_a_revocation_by_another_process_holds_for_the_next_request(loaded: Collector) -> None:
    """`keys revoke` runs in its own process; no cache lets the key in after it."""
    key = loaded.service.keys.create("owner-r2")
    assert loaded.post(simple_trace().SerializeToString(), key=key).status_code == 200
    assert loaded.export_grpc(simple_trace().SerializeToString(), key=key)
    other = open_database(loaded.service.settings.database_url)
    try:
        assert KeyStore(other).revoke(key[:12]) == 1
    finally:
        other.dispose()
    assert loaded.post(simple_trace().SerializeToString(), key=key).status_code == 401
    assert grpc_error(loaded, b"", key=key).code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize(
    "body",
    [
        b'{"\\ud800": 1}',
        b'{"resourceSpans": [{"resource": {"attributes": [{"key": "\\udfff", '
        b'"value": {"stringValue": "x"}}]}}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "\\ud800"}]}]}]}',
        b"[" * 10_000 + b"]" * 10_000,
        b'{"resourceSpans": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
        b'{"resourceSpans": [{"resource": {"attributes": [{"key": "a", "value": '
        + b'{"arrayValue": {"values": [' * 200
        + b"]}}" * 200
        + b"}]}}]}",
        b"1" * 5_000,
    ],
    ids=[
        "surrogate-key",
        "surrogate-attr-key",
        "surrogate-name",
        "deep",
        "deep-inside",
        "deep-values",
        "digits",
    ],
)
def test_hostile_json_is_400_with_a_message(loaded: Collector, body: bytes) -> None:
    reply = loaded.post(body, content_type="application/json")
    assert reply.status_code == 400, reply.text
    assert reply.json()["message"].startswith(("malformed JSON", "invalid OTLP/JSON"))
    assert len(reply.json()["message"]) <= 300


def test_a_key_never_writes_into_another_owners_agent(loaded: Collector) -> None:
    other = loaded.service.keys.create("owner-b")
    same_ids = simple_trace(service="agent-a")
    assert loaded.post(same_ids.SerializeToString(), key=other).status_code == 200
    assert loaded.post(same_ids.SerializeToString()).status_code == 200  # same ids, owner-a
    agents = loaded.query("SELECT owner, name, id FROM agents ORDER BY owner")
    assert [(o, n) for o, n, _ in agents] == [("owner-a", "agent-a"), ("owner-b", "agent-a")]
    assert agents[0][2] != agents[1][2]
    owners = loaded.query("SELECT owner, count(*) FROM spans GROUP BY owner ORDER BY owner")
    assert owners == [("owner-a", 8), ("owner-b", 4)]


def test_empty_request_is_success_and_stores_nothing(loaded: Collector) -> None:
    reply = loaded.post(ExportTraceServiceRequest().SerializeToString())
    assert reply.status_code == 200
    assert not ExportTraceServiceResponse.FromString(reply.content).HasField("partial_success")
    result, _ = loaded.export_grpc(b"")
    assert result == b""
    assert loaded.post(b"{}", content_type="application/json").json() == {}
    assert loaded.span_count() == BASELINE_SPANS


def test_database_failure_is_retryable_and_loses_nothing(loaded: Collector) -> None:
    loaded.execute("ALTER TABLE spans RENAME TO spans_away")
    try:
        body = simple_trace().SerializeToString()
        reply = loaded.post(body)
        assert reply.status_code == 503
        assert reply.headers["retry-after"].isdigit()
        error = grpc_error(loaded, body)
        assert error.code() == grpc.StatusCode.UNAVAILABLE
        details = dict(error.trailing_metadata() or ())["grpc-status-details-bin"]
        retry = error_details_pb2.RetryInfo()
        assert status_pb2.Status.FromString(details).details[0].Unpack(retry)
        assert retry.retry_delay.seconds >= 1
    finally:
        loaded.execute("ALTER TABLE spans_away RENAME TO spans")
    assert loaded.span_count() == BASELINE_SPANS
    assert loaded.post(body).status_code == 200  # the retry succeeds


@pytest.mark.timing
def test_full_queue_is_503_with_retry_after(tmp_path: Path, database_url: str) -> None:
    # No sweep while writes are blocked: its retention job would hold the
    # writer, and then the FIRST export, not the third, would find the queue full.
    settings = {"queue_max_spans": 4, "sweep_interval_s": 3600.0, "database_url": database_url}
    with running_collector(tmp_path, **settings) as c:
        with c.writes_blocked():  # the writer now waits for the lock
            first: list[int] = []
            body = simple_trace().SerializeToString()
            body2 = simple_trace().SerializeToString()
            sender = threading.Thread(target=lambda: first.append(c.post(body).status_code))
            sender.start()
            writer = c.service.writer._thread  # first batch taken, blocked on the lock:
            wait_for(lambda: running(writer, "_commit"), what="the writer's first commit")
            second = threading.Thread(target=lambda: first.append(c.post(body2).status_code))
            second.start()
            depth = "badge_queue_depth_spans"  # second batch queued
            wait_for(lambda: metric(c, depth), until=lambda spans: spans == 4, what=depth)
            reply = c.post(simple_trace().SerializeToString())
            assert reply.status_code == 503
            assert "queue full" in status_of(reply.content).message
            assert reply.headers["retry-after"] == "1"
        sender.join()
        second.join()
        assert first == [200, 200]
        assert c.span_count() == 8


def test_metrics_count_requests_and_rejections(loaded: Collector) -> None:
    loaded.post(b"x", key=None)
    text = loaded.http.get(f"{loaded.http_url}/metrics").text
    assert 'badge_export_requests_total{status="unauthenticated",transport="http"} 1.0' in text
    assert "badge_spans_accepted_total" in text
    assert "badge_queue_depth_spans" in text


def test_json_status_for_bad_json_ids_rejects_only_that_span(loaded: Collector) -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {"traceId": "zz", "spanId": "eee19b7ec3c1b174", "name": "bad"},
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b175",
                                "parentSpanId": "",
                                "name": "good",
                            },
                        ]
                    }
                ]
            }
        ]
    }
    reply = loaded.post(json.dumps(body).encode(), content_type="application/json")
    assert reply.status_code == 200
    assert reply.json()["partialSuccess"]["rejectedSpans"] == "1"


def test_nul_characters_in_text_are_stored_on_every_database(loaded: Collector) -> None:
    """PostgreSQL text cannot hold NUL; the span is stored, its bytes exact."""
    trace_id = new_trace_id()
    s = span(trace_id, new_span_id(), "tool\x00name", attributes={"gen_ai.tool.name": "t\x00"})
    s.status.message = "bad\x00"
    assert (
        loaded.post(
            request([s], resource={"service.name": "ag\x00ent"}).SerializeToString()
        ).status_code
        == 200
    )
    assert loaded.query(
        "SELECT name, status_message FROM spans WHERE trace_id = ?", trace_id.hex()
    ) == [("tool\ufffdname", "bad\ufffd")]
    assert ("ag\ufffdent",) in loaded.query("SELECT name FROM agents")
