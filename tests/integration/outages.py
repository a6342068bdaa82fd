"""Helpers of the door-outage tests (test_grpc_door_outages.py,
test_http_door_outages.py): metrics read in-process, raw HTTP on a socket,
and the errors the server logs."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.integration.harness import Collector

GENEROUS_S = 15.0  # how long a thing that should take ~1-2 s may take on a busy machine


def metric(c: Collector, name: str, **labels: str) -> float:
    """A metric read in-process (the HTTP port may be full, on purpose)."""
    text = c.service.metrics.render().decode()
    total = 0.0
    for found_labels, value in re.findall(rf"^{name}(\{{[^}}]*\}})? (\S+)$", text, re.M):
        if all(f'{k}="{v}"' in found_labels for k, v in labels.items()):
            total += float(value)
    return total


def until_closed(sock: socket.socket, within: float = GENEROUS_S) -> bytes:
    """Everything the server sends until it closes; fails if it has not closed in time."""
    sock.settimeout(within)
    received = b""
    deadline = time.monotonic() + within
    try:
        while chunk := sock.recv(65536):
            received += chunk
            if time.monotonic() > deadline:
                break
        else:
            return received
    except TimeoutError:
        pass
    except ConnectionResetError:
        return received
    raise AssertionError(f"the server kept the connection open: {received[:200]!r}")


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """One whole answer (head, body) from a connection the server keeps open."""
    sock.settimeout(GENEROUS_S)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole head: {received!r}"
        received += chunk
    head, body = received.split(b"\r\n\r\n", 1)
    length = re.search(rb"content-length: (\d+)", head, re.I)
    assert length is not None, head
    while len(body) < int(length.group(1)):
        chunk = sock.recv(65536)
        assert chunk, "closed before a whole body"
        body += chunk
    return head, body


def upload_head(path: str, length: int, key: str | None, media: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-type: {media}"]
    if key is not None:
        lines.append(f"authorization: Bearer {key}")
    lines.append(f"content-length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Collected(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def errors_logged(level: int = logging.ERROR) -> Iterator[list[logging.LogRecord]]:
    """ERROR (or `level` and above) records of the collector and of uvicorn
    (whose loggers do not propagate to the root; attach once the server has
    configured them)."""
    handler = Collected(level)
    loggers = [logging.getLogger(), logging.getLogger("uvicorn")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
