"""No connection, stream or upload holds a door for long without sending
(issue 29, docs/reliability.md "Slow and idle clients"): the HTTP port.

Each test is an attack that took the port down for every owner: uploads
that declare 16 MiB and send one byte, connections that send nothing or
trickle a head, a thousand of them against a low descriptor limit. The
collector runs in-process (harness) or as a real process, on loopback
sockets; the timeouts are set small through the settings and every wait
has a wide margin, for a loaded machine.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.rpc import status_pb2

from bench.support.otlp import simple_trace
from bench.support.servers import cli, start_server
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.outages import (
    GENEROUS_S,
    errors_logged,
    metric,
    read_response,
    until_closed,
    upload_head,
)
from tests.schemas import sqlite_copy_at_head

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog

Connect = Callable[[Collector], socket.socket]


@pytest.fixture
def raw() -> Iterator[Connect]:
    """Raw connections to a collector's HTTP port, all closed after the test."""
    opened: list[socket.socket] = []

    def connect(c: Collector) -> socket.socket:
        opened.append(socket.create_connection(("127.0.0.1", c.service.http_port), timeout=30))
        return opened[-1]

    yield connect
    for sock in opened:
        sock.close()


@pytest.mark.parametrize("insecure", [False, True], ids=["keyed", "insecure"])
def test_uploads_that_declare_16_mib_and_stall_hold_what_they_sent_until_a_408(
    tmp_path: Path, raw: Connect, insecure: bool
) -> None:
    with running_collector(tmp_path, insecure=insecure, body_timeout_s=3.0) as c:
        other = None if insecure else c.service.keys.create("owner-b")
        stalls = [raw(c) for _ in range(2)]
        for sock in stalls:
            sock.sendall(upload_head("/v1/traces", 16 * 2**20, other, "application/x-protobuf"))
            sock.sendall(b"\n")
        wait_for(lambda: metric(c, "badge_inflight_bytes") == 2, GENEROUS_S)
        answers = [c.post(simple_trace().SerializeToString()).status_code for _ in range(5)]
        assert answers == [200] * 5
        for sock in stalls:
            answer = until_closed(sock)
            assert answer.startswith(b"HTTP/1.1 408 ")
            status = status_pb2.Status.FromString(answer.split(b"\r\n\r\n", 1)[1])
            assert status.code == 4 and "body not received within 3 s" in status.message
            sock.close()
        wait_for(lambda: metric(c, "badge_inflight_bytes") == 0, GENEROUS_S)
        assert c.span_count() == 20


def test_one_keys_stalled_uploads_hold_at_most_half_the_inflight_budget(
    tmp_path: Path, raw: Connect
) -> None:
    settings: dict[str, Any] = {"max_inflight_bytes": 256 * 1024}
    with running_collector(tmp_path, **settings) as c:
        flooder = c.service.keys.create("owner-b")
        first, second = raw(c), raw(c)
        first.sendall(upload_head("/v1/traces", 200 * 1024, flooder, "application/x-protobuf"))
        first.sendall(b"\n" * 100 * 1024)  # then stalls
        wait_for(lambda: metric(c, "badge_inflight_bytes") == 100 * 1024, GENEROUS_S)
        second.sendall(upload_head("/v1/traces", 200 * 1024, flooder, "application/x-protobuf"))
        second.sendall(b"\n" * 100 * 1024)
        head, body = read_response(second)
        assert head.startswith(b"HTTP/1.1 503 ")
        assert "this key's uploads are still arriving" in status_pb2.Status.FromString(body).message
        assert c.post(simple_trace().SerializeToString()).status_code == 200  # another owner
        first.close()
        second.close()
        wait_for(lambda: metric(c, "badge_inflight_bytes") == 0, GENEROUS_S)


def test_connections_that_send_nothing_trickle_a_head_or_idle_are_closed(
    tmp_path: Path, raw: Connect
) -> None:
    settings: dict[str, Any] = {"header_timeout_s": 1.0, "idle_timeout_s": 1.0}
    with running_collector(tmp_path, **settings) as c:
        silent = [raw(c) for _ in range(5)]
        trickle = raw(c)
        trickle.sendall(b"GET /healthz HTTP/1.1\r\n")
        stop = threading.Event()

        def drip() -> None:  # a header line every 0.3 s: never a whole head
            for n in range(100):
                if stop.wait(0.3):
                    return
                try:
                    trickle.sendall(f"x-drip-{n}: 1\r\n".encode())
                except OSError:
                    return

        dripping = threading.Thread(target=drip)
        dripping.start()
        kept = raw(c)
        kept.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        try:
            assert until_closed(kept).startswith(b"HTTP/1.1 200 ")  # then idle, then closed
            for sock in silent:
                assert until_closed(sock) == b""
            assert until_closed(trickle).startswith(b"HTTP/1.1 408 ")
        finally:
            stop.set()
            dripping.join()
        assert metric(c, "badge_http_connections_closed_total", reason="head_timeout") == 6
        assert metric(c, "badge_http_connections_closed_total", reason="idle_timeout") == 1
        assert c.http.get(f"{c.http_url}/healthz").status_code == 200


def test_a_body_that_never_comes_gets_408_on_any_route_without_a_traceback(
    tmp_path: Path, raw: Connect
) -> None:
    with running_collector(tmp_path, body_timeout_s=1.0) as c, errors_logged() as errors:
        grader = c.service.keys.create("owner-a", "grader")
        sock = raw(c)
        sock.sendall(upload_head("/api/v1/grades", 200, grader, "application/json"))
        sock.sendall(b'{"agent": ')
        answer = until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == 4
        time.sleep(0.5)  # the app's task unwinds after the connection closed
        assert not errors, [record.getMessage() for record in errors]
        assert c.http.get(f"{c.http_url}/healthz").status_code == 200


def test_past_max_connections_idle_ones_make_room_and_busy_ones_get_503(
    tmp_path: Path, raw: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    settings: dict[str, Any] = {
        "max_connections": 16,
        "header_timeout_s": 60.0,
        "body_timeout_s": 60.0,
    }
    with running_collector(tmp_path, **settings) as c:
        idle = [raw(c) for _ in range(30)]  # an attacker's connections that send nothing
        assert c.http.get(f"{c.http_url}/healthz").status_code == 200
        busy = [raw(c) for _ in range(16)]  # uploads in progress: never closed to make room
        for sock in busy:
            sock.sendall(upload_head("/v1/traces", 1000, c.key, "application/x-protobuf") + b"\n")
        wait_for(lambda: metric(c, "badge_inflight_bytes") == 16, GENEROUS_S)
        for sock in idle:
            assert until_closed(sock) == b""  # all made room
        for _ in range(5):
            refused = until_closed(raw(c))
            head, body = refused.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head
            assert json.loads(body)["code"] == 14
        assert metric(c, "badge_http_connections_closed_total", reason="evicted") >= 30
        assert metric(c, "badge_http_connections_closed_total", reason="refused") == 5
        assert metric(c, "badge_http_connections_open") == 16
        full = [r for r in caplog.records if "HTTP port full" in r.getMessage()]
        assert len(full) == 1  # one line a minute, not one per refusal
        for sock in busy:
            sock.close()
        wait_for(lambda: metric(c, "badge_http_connections_open") <= 1, GENEROUS_S)
        assert c.http.get(f"{c.http_url}/healthz").status_code == 200


def test_a_thousand_idle_connections_at_a_low_descriptor_limit_leave_the_port_up(
    tmp_path: Path,
) -> None:
    """At a limit of 600 descriptors the server holds (600 - 256) / 2 = 172
    connections per door: the 1,000 that send nothing make room for the ones
    that do, and no accept fails (before: /healthz and exports timed out,
    and every failed accept logged a traceback, ~5 MB of log a second)."""
    database = tmp_path / "limited.db"
    url = sqlite_copy_at_head(database)  # keys create makes none
    key = cli("keys", "create", "--owner", "owner-a", "--database-url", url)
    server = start_server(database, nofile=600)
    held: list[socket.socket] = []
    try:
        for _ in range(1000):
            held.append(socket.create_connection(("127.0.0.1", server.http_port), timeout=10))
        logged = sum(map(len, server.output))
        with httpx.Client(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10) as http:
            assert http.get("/healthz").status_code == 200
            reply = http.post(
                "/v1/traces",
                content=simple_trace().SerializeToString(),
                headers={
                    "content-type": "application/x-protobuf",
                    "authorization": f"Bearer {key.stdout.strip()}",
                },
            )
            assert reply.status_code == 200
            time.sleep(2)
            metrics = http.get("/metrics").text
        assert re.search(r"^badge_accept_errors_total 0\.0$", metrics, re.M)
        assert re.search(
            r'^badge_http_connections_closed_total\{reason="evicted"\} (\d+)', metrics, re.M
        )
        assert sum(map(len, server.output)) - logged < 2000  # no line per connection
        assert any("holding 172 per door" in line for line in server.output)
    finally:
        for sock in held:
            sock.close()
        server.stop()
