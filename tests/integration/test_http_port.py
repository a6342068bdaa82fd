"""Rules of the whole HTTP port (read API, dashboard, OTLP/HTTP), against a
real server: the `Host` allow-list against DNS rebinding (docs/api.md "Who
may read what") and HEAD wherever GET answers."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from bench.support.otlp import new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, running_collector

# Every kind of route the port serves: health, API, dashboard, static files,
# the OpenAPI document, the API reference, and the OTLP door.
PATHS = (
    "/healthz",
    "/readyz",
    "/metrics",
    "/api/v1/agents",
    "/",
    "/assets/dashboard.css",
    "/openapi.json",
    "/docs",
)


def export(c: Collector, host: str) -> httpx.Response:
    body = request([span(new_trace_id(), new_span_id(), "x")]).SerializeToString()
    return c.post(body, headers={"host": host})


def test_a_foreign_host_is_refused_on_every_route(collector: Collector) -> None:
    for host in ("evil.example", f"evil.example:{collector.service.http_port}", "127.0.0.2"):
        for path in PATHS:
            reply = collector.http.get(collector.http_url + path, headers={"host": host})
            assert reply.status_code == 421, (host, path)
            assert "not served here" in reply.json()["detail"]
        assert (
            collector.http.delete(
                f"{collector.http_url}/api/v1/agents/x", headers={"host": host}
            ).status_code
            == 421
        )
        assert export(collector, host).status_code == 421
    assert collector.span_count() == 0


def test_the_bound_address_and_localhost_are_served_with_or_without_the_port(
    collector: Collector,
) -> None:
    port = collector.service.http_port
    for name in ("127.0.0.1", "localhost", "LOCALHOST", "[::1]"):
        for host in (name, f"{name}:{port}"):
            for path in PATHS:
                reply = collector.http.get(collector.http_url + path, headers={"host": host})
                assert reply.status_code == 200, (host, path, reply.text)
    # the OTel SDK's exporter and every other client send Host: 127.0.0.1:PORT
    assert export(collector, f"127.0.0.1:{port}").status_code == 200


def test_a_request_without_host_passes_since_no_browser_sends_one(collector: Collector) -> None:
    with socket.create_connection(("127.0.0.1", collector.service.http_port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b'{"status":"ok"}')


def test_two_host_headers_are_a_400_on_every_route(collector: Collector) -> None:
    """RFC 9112 section 3.2 (issue 37 item 13): which of two names is the
    target is anyone's guess; before, the first was checked and served."""
    for path in ("/healthz", "/api/v1/agents", "/", "/v1/traces"):
        for hosts in (("127.0.0.1", "evil.example"), ("localhost", "localhost")):
            lines = [f"GET {path} HTTP/1.1", *(f"Host: {h}" for h in hosts), "Connection: close"]
            answer = exchange(collector, ("\r\n".join(lines) + "\r\n\r\n").encode())
            assert answer.startswith(b"HTTP/1.1 400 "), (path, hosts, answer[:80])
            assert "2 Host header lines" in json.loads(answer.split(b"\r\n\r\n", 1)[1])["detail"]
    assert collector.http.get(f"{collector.http_url}/healthz").status_code == 200


def exchange(c: Collector, sent: bytes) -> bytes:
    """Everything the server answers to `sent` on a connection it then closes."""
    with socket.create_connection(("127.0.0.1", c.service.http_port), timeout=10) as sock:
        sock.sendall(sent)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return answer


def test_a_server_on_every_address_answers_its_configured_hosts(tmp_path: Path) -> None:
    allowed = "collector.example, Dash.Example.:8080"
    with running_collector(tmp_path, host="0.0.0.0", allowed_hosts=allowed) as c:
        port = c.service.http_port
        for host in ("collector.example", f"dash.example:{port}", f"127.0.0.1:{port}", "0.0.0.0"):
            assert c.http.get(f"{c.http_url}/healthz", headers={"host": host}).status_code == 200
            assert export(c, host).status_code == 200
        for host in ("evil.example", "collector.example.evil.example", "example"):
            assert c.http.get(f"{c.http_url}/", headers={"host": host}).status_code == 421


@pytest.mark.parametrize(
    "path", [*PATHS, "/api/v1/runs", "/api/v1/runs/nope", "/agents/nope", "/v1/traces"]
)
def test_head_answers_wherever_get_does(collector: Collector, path: str) -> None:
    url = collector.http_url + path
    got = collector.http.get(url)
    head = collector.http.head(url)
    assert head.status_code == got.status_code
    assert head.content == b""
    compared = ["content-type", "content-security-policy", "allow"]
    if path != "/metrics":  # its counters may move between the two requests
        compared.append("content-length")
    for name in compared:
        assert head.headers.get(name) == got.headers.get(name), name


def test_a_405_offers_head_beside_get(collector: Collector) -> None:
    reply = collector.http.post(f"{collector.http_url}/healthz")
    assert reply.status_code == 405 and reply.headers["allow"] == "GET, HEAD"
