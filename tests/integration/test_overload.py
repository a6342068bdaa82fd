"""Overload is refused before decoding, at once (docs/otlp.md "Limits").

The queue bound used to be checked only after decoding, and the decoder
backlog had no bound: a flood grew memory to 2.8 GB and answers to 122 s
without a single 503.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from bench.support.otlp import simple_trace
from tests.integration.harness import Collector, running_collector, wait_for

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog


def metric(c: Collector, name: str) -> float:
    text = c.http.get(f"{c.http_url}/metrics").text
    found = re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    return sum(float(value) for value in found)


def test_past_the_inflight_bound_exports_are_refused_at_once_and_not_decoded(
    tmp_path: Path, database_url: str
) -> None:
    body = simple_trace().SerializeToString()
    # Room for one request's rows only; no sweeps to take the writer meanwhile.
    settings = {"max_inflight_bytes": 8 * 1024, "sweep_interval_s": 3600.0}
    with running_collector(tmp_path, database_url=database_url, **settings) as c:
        answers: list[int] = []
        with c.writes_blocked():
            first = threading.Thread(target=lambda: answers.append(c.post(body).status_code))
            first.start()
            wait_for(lambda: metric(c, "badge_inflight_bytes") > 0)
            started = time.monotonic()
            reply = c.post(simple_trace().SerializeToString())
            assert reply.status_code == 503
            assert reply.headers["retry-after"] == "1"
            assert "in flight" in reply.text
            try:
                c.export_grpc(simple_trace().SerializeToString())
                raise AssertionError("gRPC export was accepted")
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.UNAVAILABLE
                details = dict(error.trailing_metadata() or ())["grpc-status-details-bin"]
                retry = error_details_pb2.RetryInfo()
                assert status_pb2.Status.FromString(details).details[0].Unpack(retry)
            # At once, not after the blocked commit (which never comes while the lock is
            # held: a queued export would wait out its client's 30 s timeout).
            assert time.monotonic() - started < 10
            # Refused before decoding: only the first request's spans were ever decoded
            # (admitted first, the first request may still be decoding: wait for it).
            received = wait_for(lambda: metric(c, "badge_spans_received_total"), until=bool)
            assert received == 4
        first.join(30)
        assert answers == [200]
        assert metric(c, "badge_inflight_bytes") == 0  # every reservation returned
        assert c.post(simple_trace().SerializeToString()).status_code == 200
        assert c.span_count() == 8
