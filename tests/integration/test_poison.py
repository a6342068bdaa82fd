"""One client's unstorable data never fails anyone else's export (docs/otlp.md "Limits").

A span whose timestamp does not fit a signed 64-bit integer used to fail the
whole group commit, so every request sharing it, other owners' included, got
503 "database unavailable" and was retried forever.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from bench.support.otlp import new_span_id, new_trace_id, request, simple_trace, span
from collector.errors import BadRequest
from collector.writer import Batch
from tests.collector.span_rows import span_row
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.outages import metric

TOO_LATE = 1 << 63  # legal for a fixed64, not for a signed 64-bit column


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with running_collector(tmp_path, database_url=database_url) as c:
        yield c


def poison_json(field: str) -> bytes:
    trace_id = new_trace_id().hex()
    spans = [
        {  # the start alone would be refused as after the end (0)
            "traceId": trace_id,
            "spanId": new_span_id().hex(),
            "name": "poison",
            "startTimeUnixNano": str(TOO_LATE) if field == "startTimeUnixNano" else "1",
            "endTimeUnixNano": str(TOO_LATE),
        },
        {"traceId": trace_id, "spanId": new_span_id().hex(), "name": "fine"},
    ]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    return json.dumps(body).encode()


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
def test_a_timestamp_past_2_63_refuses_only_its_span(collector: Collector, field: str) -> None:
    reply = collector.post(poison_json(field), content_type="application/json")
    assert reply.status_code == 200
    assert reply.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert "below 2^63" in reply.json()["partialSuccess"]["errorMessage"]
    assert collector.query("SELECT name FROM spans") == [("fine",)]


def test_out_of_range_enums_are_refused_per_span(collector: Collector) -> None:
    trace_id = new_trace_id()
    kind = span(trace_id, new_span_id(), "kind")
    kind.kind = 70_000  # a smallint column could not hold it on PostgreSQL
    status = span(trace_id, new_span_id(), "status")
    status.status.code = 40_000
    reply = collector.post(
        request([kind, status, span(trace_id, new_span_id(), "ok")]).SerializeToString()
    )
    partial = ExportTraceServiceResponse.FromString(reply.content).partial_success
    assert reply.status_code == 200 and partial.rejected_spans == 2
    assert "kind must be" in partial.error_message and "status.code" in partial.error_message
    result, _ = collector.export_grpc(request([kind]).SerializeToString())
    assert ExportTraceServiceResponse.FromString(result).partial_success.rejected_spans == 1


@pytest.mark.timing
def test_poison_and_innocent_traffic_together_every_innocent_request_is_200(
    collector: Collector,
) -> None:
    innocent_key = collector.service.keys.create("innocent")
    codes: dict[str, list[int]] = {"poison": [], "innocent": []}

    def send(kind: str, times: int) -> None:
        for _ in range(times):
            if kind == "poison":
                body, key = poison_json("startTimeUnixNano"), "default"
                reply = collector.post(body, content_type="application/json", key=key)
            else:
                reply = collector.post(simple_trace().SerializeToString(), key=innocent_key)
            codes[kind].append(reply.status_code)

    def together(times: int) -> None:
        threads = [
            threading.Thread(target=send, args=(kind, times))
            for kind in ["poison"] * 2 + ["innocent"] * 4
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    with collector.writes_blocked():  # the first requests all wait for one commit
        first = threading.Thread(target=together, args=(1,))
        first.start()
        # all six decoded and queued behind the held lock: 4 x 4 innocent spans, 2 x 2 poison
        received = "badge_spans_received_total"
        wait_for(lambda: metric(collector, received), until=lambda n: n == 20, what=received)
    first.join()
    together(10)  # and then as they come
    assert codes["innocent"] == [200] * 44
    assert codes["poison"] == [200] * 22  # each with its bad span refused
    assert collector.query("SELECT count(*) FROM spans WHERE owner = 'innocent'") == [(176,)]


def test_a_batch_the_database_refuses_is_split_and_the_others_commit(
    collector: Collector,
) -> None:
    """Past validation (a gap in it, or a driver's limit): the writer commits
    each request of the failed group alone; only the bad one is refused, 400."""
    writer = collector.service.writer
    good = [
        Batch("o", [span_row(f"{i:032x}", "a" * 16, received_at=1.0)], [], [], {("o", f"{i:032x}")})
        for i in range(1, 4)
    ]
    bad_row = span_row("f" * 32, "b" * 16, received_at=1.0, start_ns=TOO_LATE)
    bad = Batch("o", [bad_row], [], [], {("o", "f" * 32)})
    with collector.writes_blocked():  # all four wait, then go in one transaction
        futures: list[Future[None]] = [writer.submit(b) for b in [good[0], bad, *good[1:]]]
    for future in [futures[0], *futures[2:]]:
        assert future.result(30) is None
    with pytest.raises(BadRequest, match="cannot store"):
        futures[1].result(30)
    assert collector.query("SELECT count(*) FROM spans WHERE owner = 'o'") == [(3,)]
