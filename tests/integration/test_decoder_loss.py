"""A decoder process killed under a running collector (issue 37 item 6,
docs/reliability.md "Faults"): it is replaced, readiness says not ready
until the new one runs, exports it held are refused as retryable, and
later exports are stored. Before, every later export answered 500 /
INTERNAL until a restart while /healthz and /readyz answered 200.

The collector runs in-process; its decoders are real spawned processes,
killed with SIGKILL as the OOM killer would.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import grpc
from google.rpc import error_details_pb2, status_pb2

from bench.support.otlp import new_span_id, new_trace_id, request, simple_trace, span
from bench.support.servers import decoder_pids
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.outages import GENEROUS_S, metric
from tests.waiting import POLL_S

LOST = "a decoder process stopped while decoding this export; retry"
START_S = 90.0  # spawning a decoder imports the collector's modules: slow on a loaded machine


def ready(c: Collector) -> int:
    return c.http.get(f"{c.http_url}/readyz").status_code


def unready_because(c: Collector) -> str | None:
    answer = c.http.get(f"{c.http_url}/readyz")
    return str(answer.json()["status"]) if answer.status_code == 503 else None


def test_a_killed_decoder_is_replaced_and_readiness_says_so_until_it_is(tmp_path: Path) -> None:
    with running_collector(tmp_path, decode_workers=2) as c:
        before = decoder_pids(os.getpid())
        assert len(before) == 2
        os.kill(before[0], signal.SIGKILL)
        unready = wait_for(lambda: unready_because(c), GENEROUS_S)
        assert unready == "no decoder process can decode now"
        wait_for(lambda: ready(c) == 200, START_S)
        after = decoder_pids(os.getpid())
        assert len(after) == 2 and not set(after) & set(before)
        assert c.post(simple_trace().SerializeToString()).status_code == 200
        c.export_grpc(simple_trace().SerializeToString())
        assert c.service.decoder.replaced == 1


def big_export(spans: int) -> bytes:
    """One trace of `spans` spans: a second or more to decode on a busy machine."""
    trace, root = new_trace_id(), new_span_id()
    members = [span(trace, root, "badge.run", attributes={"badge.task.id": "big"})]
    members += [
        span(trace, new_span_id(), "execute_tool t", parent=root, attributes={"note": "x" * 100})
        for _ in range(spans - 1)
    ]
    return request(members).SerializeToString()


def test_exports_held_by_a_killed_decoder_are_refused_as_retryable_and_none_is_lost(
    tmp_path: Path,
) -> None:
    bodies = [big_export(2000) for _ in range(4)]
    answers: dict[int, str] = {}

    def send(index: int, c: Collector) -> None:
        if index % 2:
            reply = c.post(bodies[index])
            if reply.status_code == 200:
                answers[index] = "ok"
                return
            assert reply.status_code == 503 and reply.headers["retry-after"] == "1"
            assert status_pb2.Status.FromString(reply.content).message == LOST
            answers[index] = "refused"
            return
        try:
            c.export_grpc(bodies[index])
            answers[index] = "ok"
        except grpc.RpcError as error:
            assert (error.code(), error.details()) == (grpc.StatusCode.UNAVAILABLE, LOST)
            details = dict(error.trailing_metadata() or ())["grpc-status-details-bin"]
            retry = error_details_pb2.RetryInfo()
            assert status_pb2.Status.FromString(details).details[0].Unpack(retry)
            answers[index] = "refused"

    with running_collector(tmp_path, decode_workers=1) as c:
        (worker,) = decoder_pids(os.getpid())
        senders = [threading.Thread(target=send, args=(i, c)) for i in range(len(bodies))]
        for sender in senders:
            sender.start()
        # Every body read and handed to the one decoder: it holds all four.
        total = sum(map(len, bodies))
        wait_for(lambda: metric(c, "badge_inflight_bytes") >= total, GENEROUS_S, every=POLL_S)
        os.kill(worker, signal.SIGKILL)
        for sender in senders:
            sender.join(GENEROUS_S * 4)
        assert sorted(answers) == [0, 1, 2, 3]  # each answered (an assertion failed otherwise)
        refused = [index for index, answer in answers.items() if answer == "refused"]
        assert refused  # the kill came while the decoder held them: at least the last waits
        wait_for(lambda: ready(c) == 200, START_S)
        for index in refused:  # as an exporter retries
            send(index, c)
            assert answers[index] == "ok"
        assert c.span_count() == 4 * 2000
        assert metric(c, "badge_export_requests_total", status="decoder_lost") == len(refused)
