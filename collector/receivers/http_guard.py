"""The HTTP port's connections as a whole: how many, which may be closed first.

uvicorn bounds none of this: `limit_concurrency` answers 503 only once a
request's head has arrived, so connections that send nothing (or a header
line every 5 s) are never counted, and ~20,000 of them took the process to
its descriptor limit (issue 29). Here every connection is admitted or not
as it opens. Past `max_connections`, the connection that has waited longest
for its next request (sending nothing, a head still incomplete, or idle
between keep-alive requests) is closed to make room, so an attacker's idle
connections cannot lock out a client that is sending; only when every
connection has a request in progress is the new one refused, with 503 +
Retry-After, then closed. Both are counted in /metrics and logged at most
once a minute, as are accepts that fail (asyncio otherwise logs a traceback
for each, thousands a second once descriptors run out).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from starlette.requests import ClientDisconnect

import proto
from collector.metrics import Metrics
from collector.receivers.limits import DoorLimits
from collector.receivers.quiet_log import OncePerMinute

log = logging.getLogger(__name__)
# Refused connections are half-closed and read until the client closes (at
# most this long), so the 503 is read rather than lost to a reset.
LINGER_S = 1.0
MAX_LINGERING = 128
UNAVAILABLE, DEADLINE_EXCEEDED, INVALID_ARGUMENT = 14, 4, 3
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Evictable(Protocol):
    def evict(self) -> None: ...


class ConnectionGuard:
    """Shared by every connection of one HTTP port (all on its event loop)."""

    def __init__(self, limits: DoorLimits, metrics: Metrics) -> None:
        self.limits = limits
        self._metrics = metrics
        self._open: set[Evictable] = set()
        self._waiting: dict[Evictable, None] = {}  # insertion order: longest wait first
        self._lingering = 0
        self._refusals = OncePerMinute(log, "HTTP port full: connections refused with 503")
        self._accept_errors = OncePerMinute(log, "HTTP port failed to accept connections")

    def admit(self, connection: Evictable) -> bool:
        """Count a new connection in, closing the longest-waiting one if the
        port is full; False (refuse it) if every open one is busy."""
        if len(self._open) >= self.limits.max_connections:
            victim = next(iter(self._waiting), None)
            if victim is None:
                self.closed("refused")
                self._refusals.note(f"{len(self._open)} open, all with a request in progress")
                return False
            self.forget(victim)
            self.closed("evicted")
            victim.evict()
        self._open.add(connection)
        self._metrics.http_connections_open.set(len(self._open))
        return True

    def waiting(self, connection: Evictable) -> None:
        """The connection now waits for a request (first in line to go)."""
        self._waiting.pop(connection, None)
        if connection in self._open:
            self._waiting[connection] = None

    def busy(self, connection: Evictable) -> None:
        """The connection has a request in progress: never closed to make room."""
        self._waiting.pop(connection, None)

    def forget(self, connection: Evictable) -> None:
        self._open.discard(connection)
        self._waiting.pop(connection, None)
        self._metrics.http_connections_open.set(len(self._open))

    def closed(self, reason: str) -> None:
        self._metrics.http_connections_closed.labels(reason).inc()

    def linger(self) -> bool:
        """Whether a refused connection may linger (a bounded number do)."""
        if self._lingering >= MAX_LINGERING:
            return False
        self._lingering += 1
        return True

    def unlinger(self) -> None:
        self._lingering -= 1

    def on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The event loop's exception handler: failed accepts are counted."""
        if "accept" in str(context.get("message", "")):
            self._metrics.accept_errors.inc()
            self._accept_errors.note(str(context.get("exception", "")))
            return
        loop.default_exception_handler(context)

    def wrap(self, app: App) -> App:
        """The app, with a client that left mid-request (or was timed out by
        the protocol) treated as what it is, not as a server error with a
        traceback."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            try:
                await app(scope, receive, send)
            except ClientDisconnect:
                pass

        return guarded


def status_response(
    status: int,
    reason: str,
    code: int,
    message: str,
    *,
    protobuf: bool = False,
    retry: bool = False,
) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, with a
    google.rpc.Status body (docs/otlp.md "Answers"), for the protocol to
    write where no request reached the app."""
    codec = proto.PROTOBUF if protobuf else proto.JSON
    body, media = codec.status(code, message), codec.media_type
    head = [
        f"HTTP/1.1 {status} {reason}",
        f"content-type: {media}",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    if retry:
        head.append("retry-after: 1")
    return ("\r\n".join(head) + "\r\n\r\n").encode("ascii") + body
