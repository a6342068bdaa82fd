"""The API's JSON bodies (issue 37 item 9): the key is checked before a byte of
the body is read, and no body is read past its route's bound (413). A keyless
400 MB `POST /grades` was read and parsed whole (753 -> 2,291 MB) and
answered 422, not 401."""

from __future__ import annotations

import importlib
import json
import pkgutil
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute

from api import routes
from api.json_bodies import MAX_BODY_BYTES, KeyFirstRoute
from api.routes.grades import MAX_BODY_BYTES as MAX_GRADE_BYTES
from api.routes.screenings import MAX_PLAN_BYTES
from collector.openapi import render
from tests.integration.harness import Collector

WRITES = [
    ("POST", "/api/v1/grades"),
    ("PUT", "/api/v1/me/radar-weights"),
    ("POST", "/api/v1/screenings"),
]
BOUNDS = {
    "/api/v1/grades": MAX_GRADE_BYTES,
    "/api/v1/me/radar-weights": MAX_BODY_BYTES,
    "/api/v1/screenings": MAX_PLAN_BYTES,
}
HUGE = 400_000_000


def head(method: str, path: str, port: int, length: int | None, key: str | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"host: 127.0.0.1:{port}"]
    lines.append("content-type: application/json")
    lines.append(
        f"content-length: {length}" if length is not None else "transfer-encoding: chunked"
    )
    if key is not None:
        lines.append(f"authorization: Bearer {key}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer_before_the_body(
    c: Collector, method: str, path: str, key: str | None, sent: bytes = b"{"
) -> tuple[int, Any]:
    """Declare a 400 MB body, send `sent` of it and wait for the answer: it
    must come while the rest of the body has not (the server's body deadline,
    30 s, is far off)."""
    port = c.service.http_port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head(method, path, port, HUGE, key) + sent)
        reply = b""
        while b"\r\n\r\n" not in reply or not _complete(reply):
            chunk = sock.recv(65536)  # times out (the test fails) if nothing comes in 10 s
            assert chunk, f"closed without an answer: {reply!r}"
            reply += chunk
    status_line, _, rest = reply.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(body)


def _complete(reply: bytes) -> bool:
    headers, _, body = reply.partition(b"\r\n\r\n")
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


@pytest.fixture
def grader(collector: Collector) -> str:
    return collector.service.keys.create("owner-a", "grader")


@pytest.mark.parametrize("method, path", WRITES)
@pytest.mark.parametrize("key", [None, "bdg_unknown"])
def test_a_body_without_a_valid_key_is_refused_before_it_is_read(
    collector: Collector, method: str, path: str, key: str | None
) -> None:
    status, problem = answer_before_the_body(collector, method, path, key)
    assert status == 401
    assert "key" in problem["detail"]


def test_a_malformed_body_without_a_key_is_401_not_422(collector: Collector) -> None:
    c = collector
    for method, path in WRITES:
        reply = c.http.request(
            method,
            f"{c.http_url}{path}",
            content=b"{",
            headers={"content-type": "application/json"},
        )
        assert reply.status_code == 401, (path, reply.text)
        assert reply.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("method, path", WRITES)
def test_a_declared_body_past_the_bound_is_413_before_it_is_read(
    collector: Collector, grader: str, method: str, path: str
) -> None:
    status, problem = answer_before_the_body(collector, method, path, grader)
    assert status == 413
    assert problem["detail"] == f"body of {HUGE} bytes exceeds {BOUNDS[path]}"


def chunks(total: int, size: int = 1 << 20) -> Iterator[bytes]:
    yield b'{"weights": {"latency": 1, "pad": "'
    sent = 0
    while sent < total:
        yield b"x" * size
        sent += size


def test_an_undeclared_body_is_read_only_up_to_the_bound(collector: Collector, grader: str) -> None:
    """Chunked, no Content-Length: refused once the bound is passed, and the
    connection still answers the next request."""
    c = collector
    url = f"{c.http_url}/api/v1/me/radar-weights"
    headers = {"authorization": f"Bearer {grader}", "content-type": "application/json"}
    reply = c.http.put(url, content=chunks(8 * MAX_BODY_BYTES), headers=headers)
    assert reply.status_code == 413, reply.text
    assert reply.json()["detail"] == f"body exceeds {MAX_BODY_BYTES} bytes"
    again = c.http.put(url, json={"weights": {"latency": 2}}, headers=headers)
    assert again.status_code == 200 and again.json()["weights"]["latency"] == 2


def test_bodies_within_the_bound_are_read_as_before(collector: Collector, grader: str) -> None:
    c = collector
    headers = {"authorization": f"Bearer {grader}"}
    weights = c.http.put(
        f"{c.http_url}/api/v1/me/radar-weights", json={"weights": {"cost": 3}}, headers=headers
    )
    assert weights.status_code == 200 and weights.json()["saved"] is True
    text = "\x01" * (64 * 1024)  # the longest text a grade holds, escaped six times over
    body = {"agent": "a", "run_key": "r", "success": True, "output": text, "expected_output": text}
    grade = c.http.post(f"{c.http_url}/api/v1/grades", json=body, headers=headers)
    assert grade.status_code == 202, grade.text
    invalid = c.http.post(f"{c.http_url}/api/v1/grades", content=b"{", headers=headers)
    assert invalid.status_code == 422  # a key, then the body: as before
    agent_key = c.http.post(
        f"{c.http_url}/api/v1/grades", json=body, headers={"authorization": f"Bearer {c.key}"}
    )
    assert agent_key.status_code == 403  # what the key may do is still the view's to say


def test_every_route_that_reads_a_body_checks_the_key_first() -> None:
    """A route added later with a body and the plain APIRoute would read it keyless."""
    routes = [r for m in _route_modules() for r in m.router.routes if isinstance(r, APIRoute)]
    with_body = [r for r in routes if r.body_field is not None]
    assert {(next(iter(r.methods)), r.path) for r in with_body} == set(WRITES)
    assert all(isinstance(r, KeyFirstRoute) for r in with_body)
    document = json.loads(render())
    with_request_body = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    }
    assert with_request_body == set(WRITES)  # no body is read by a route outside api.routes
    for method, path in WRITES:
        operation = document["paths"][path][method.lower()]
        assert operation["x-max-body-bytes"] == BOUNDS[path]
        assert "413" in operation["responses"]


def _route_modules() -> list[Any]:
    return [
        importlib.import_module(f"api.routes.{m.name}")
        for m in pkgutil.iter_modules(routes.__path__)
    ]
