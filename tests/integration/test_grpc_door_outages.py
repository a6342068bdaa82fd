"""No connection, stream or upload holds a door for long without sending
(issue 29, docs/reliability.md "Slow and idle clients"): the gRPC door.

Each test is an attack that took the door down for every owner: Export
streams that never send their message, without a key or with one. The
collector runs in-process (harness) on loopback; the timeouts are set small
through the settings and every wait has a wide margin, for a loaded machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.support.otlp import simple_trace
from bench.support.servers import EXPORT
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.outages import GENEROUS_S, metric

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog


@contextmanager
def stalled_streams(c: Collector, count: int, key: str | None) -> Iterator[list[grpc.Future]]:
    """`count` Export calls that open their stream and never send the message."""
    channel = grpc.insecure_channel(f"127.0.0.1:{c.service.grpc_port}")
    release = threading.Event()

    def never() -> Iterator[bytes]:
        release.wait()
        yield from ()

    call = channel.stream_unary(EXPORT, request_serializer=None, response_deserializer=None)
    metadata = [("authorization", f"Bearer {key}")] if key else []
    try:
        yield [call.future(never(), metadata=metadata, timeout=60) for _ in range(count)]
    finally:
        release.set()
        channel.close()


def code_of(call: grpc.Future, timeout: float = GENEROUS_S) -> grpc.StatusCode:
    error = call.exception(timeout=timeout)
    return grpc.StatusCode.OK if error is None else error.code()


def valid_export(c: Collector) -> grpc.StatusCode:
    """A valid export from another client; a short deadline, so a stalled door fails fast."""
    try:
        c.channel.unary_unary(EXPORT)(
            simple_trace().SerializeToString(),
            metadata=[("authorization", f"Bearer {c.key}")],
            timeout=8,
        )
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


def health(c: Collector) -> int:
    reply = health_pb2_grpc.HealthStub(c.channel).Check(health_pb2.HealthCheckRequest(), timeout=8)
    return int(reply.status)


def test_grpc_calls_without_a_valid_key_are_refused_without_holding_a_thread(
    tmp_path: Path,
) -> None:
    # Today's default: 32 export slots, as there were 32 handler threads.
    with running_collector(tmp_path) as c:
        with stalled_streams(c, 40, None) as keyless, stalled_streams(c, 20, "bdg_wrong") as bad:
            assert valid_export(c) == grpc.StatusCode.OK
            assert health(c) == health_pb2.HealthCheckResponse.SERVING
            assert {code_of(call) for call in keyless} == {grpc.StatusCode.UNAUTHENTICATED}
            assert {code_of(call) for call in bad} == {grpc.StatusCode.UNAUTHENTICATED}
        assert c.span_count() == 4


def test_grpc_streams_with_a_key_that_never_send_are_ended_and_excess_calls_refused_at_once(
    tmp_path: Path,
) -> None:
    settings: dict[str, Any] = {"grpc_max_concurrent_exports": 4, "body_timeout_s": 2.0}
    with running_collector(tmp_path, **settings) as c:
        b, d = c.service.keys.create("owner-b"), c.service.keys.create("owner-d")
        with stalled_streams(c, 3, b) as first:
            # One key's calls waiting for their message hold half the slots at most.
            wait_for(lambda: sum(call.done() for call in first) == 1, GENEROUS_S)
            shut_out = [call for call in first if call.done()]
            assert metric(c, "badge_grpc_exports_in_progress") == 2
            assert code_of(shut_out[0]) == grpc.StatusCode.UNAVAILABLE
            assert "of this key's gRPC exports are waiting" in (shut_out[0].exception().details())
            with stalled_streams(c, 2, d) as second:
                wait_for(lambda: metric(c, "badge_grpc_exports_in_progress") == 4, GENEROUS_S)
                refused_at_once(c)
                assert health(c) == health_pb2.HealthCheckResponse.SERVING
                for call in [call for call in first if call not in shut_out] + second:
                    error = call.exception(timeout=GENEROUS_S)
                    assert error is not None
                    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                    assert "no request message within 2 s" in (error.details() or "")
        wait_for(lambda: metric(c, "badge_grpc_exports_in_progress") == 0, GENEROUS_S)
        assert valid_export(c) == grpc.StatusCode.OK
        wait_for(lambda: metric(c, "badge_export_requests_total", status="timeout") == 4)


def refused_at_once(c: Collector) -> None:
    """An export past the slots: UNAVAILABLE with RetryInfo, at once."""
    began = time.monotonic()
    try:
        valid = c.channel.unary_unary(EXPORT)
        valid(
            simple_trace().SerializeToString(),
            metadata=[("authorization", f"Bearer {c.key}")],
            timeout=8,
        )
        raise AssertionError("an export was let in past the slots")
    except grpc.RpcError as busy:
        assert busy.code() == grpc.StatusCode.UNAVAILABLE
        details = dict(busy.trailing_metadata() or ())["grpc-status-details-bin"]
        retry = error_details_pb2.RetryInfo()
        assert status_pb2.Status.FromString(details).details[0].Unpack(retry)
    assert time.monotonic() - began < 5  # refused at once, not queued


def test_a_key_stalling_its_grpc_calls_leaves_the_other_owners_room(tmp_path: Path) -> None:
    with running_collector(tmp_path, body_timeout_s=60.0) as c:
        attacker = c.service.keys.create("owner-b")
        with stalled_streams(c, 40, attacker) as stalled:
            wait_for(lambda: sum(call.done() for call in stalled) == 24, GENEROUS_S)
            assert metric(c, "badge_grpc_exports_in_progress") == 16  # half of the 32 slots
            assert {code_of(call) for call in stalled if call.done()} == {
                grpc.StatusCode.UNAVAILABLE
            }
            assert valid_export(c) == grpc.StatusCode.OK
            assert health(c) == health_pb2.HealthCheckResponse.SERVING
