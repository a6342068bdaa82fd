"""uvicorn's httptools protocol, with the deadlines and bounds it lacks.

uvicorn (0.55, httptools) times out only a kept-alive connection between
two requests: a connection that sends nothing, or its head a header line
every 5 s, or a body that never comes, stays open for good (issue 29). On
each connection here:

- the head (request line and headers) must be in within `header_timeout_s`
  of its first byte, or of the connection's opening for its first request:
  a total, not a per-line timer, so a trickle does not reset it; past it
  the connection is closed (408 first if part of a head came). A head over
  `max_head_bytes` gets 431: httptools would buffer a head without end.
- the body must be in within `body_timeout_s` of the head: past it 408
  (a google.rpc.Status, protobuf if the request was) and the connection is
  closed; the app sees the client gone, and what it held (the export's
  in-flight budget) is returned as it unwinds.
- between requests, uvicorn's keep-alive timer closes it after
  `idle_timeout_s`.
- `http_guard.ConnectionGuard` admits it or not as it opens.

The parser is uvicorn's own (httptools' llhttp): keep-alive throughput is
unchanged (bench/ingest.py, docs/reliability.md). The overrides depend on
uvicorn's internals, so pyproject.toml pins the uvicorn they were tested on
and tests/collector/test_uvicorn_pin.py fails when it or those methods change.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from collector.receivers.http_guard import (
    DEADLINE_EXCEEDED,
    INVALID_ARGUMENT,
    LINGER_S,
    UNAVAILABLE,
    ConnectionGuard,
    status_response,
)

PROTOBUF = b"application/x-protobuf"


class GuardedHttpProtocol(HttpToolsProtocol):
    guard: ClassVar[ConnectionGuard]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        # call_later takes any float; uvicorn's Config types the setting int.
        self.timeout_keep_alive = self.guard.limits.idle_timeout_s  # type: ignore[assignment]
        self._timer: asyncio.TimerHandle | None = None
        self._in_head = False  # from a request's first byte (or the opening) to its last header
        self._head_seen = False  # some byte of the current head has come
        self._head_bytes = 0
        self._began_in_chunk = False
        self._in_body = False
        self._refused = False
        self._lingers = False

    # Connection events

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self.guard.admit(self):
            self._refuse(transport)
            return
        super().connection_made(transport)
        self._start_head()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # read and dropped until the client closes
        self._began_in_chunk = False
        if not (self._in_head or self._in_body) and self._answered():
            # Any byte after an idle spell starts the next head's deadline
            # (uvicorn stops its keep-alive timer on any byte, even a stray CRLF).
            self._start_head()
        super().data_received(data)
        if self._in_head and not self._began_in_chunk:
            self._head_bytes += len(data)  # the chunk a head began in is not counted
            if self._head_bytes > self.guard.limits.max_head_bytes:
                message = f"request head over {self.guard.limits.max_head_bytes} bytes"
                self._answer_and_close(431, "Request Header Fields Too Large", message)
                self.guard.closed("head_too_large")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._refused:
            self.connections.discard(self)
            if self._lingers:
                self.guard.unlinger()
            return
        self.guard.forget(self)
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if self._refused:
            self.transport.close()
            return
        super().shutdown()

    def evict(self) -> None:
        """Closed to make room for a new connection (ConnectionGuard.admit)."""
        self._disarm()
        self.transport.close()

    # Parser and response callbacks (uvicorn's, extended)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if not self._in_head:  # a later request on a kept-alive connection
            self._start_head()
            self._began_in_chunk = True
        self._head_seen = True

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._in_head = False
        self._in_body = True
        self.guard.busy(self)
        self._arm(self.guard.limits.body_timeout_s, self._body_timed_out)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_body = False
        self._disarm()
        if self._answered():  # answered before its body was read: idle from now
            self._idle()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._answered() and not (self._in_head or self._in_body):
            self.guard.waiting(self)  # uvicorn's keep-alive timer now runs

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing():
            self.guard.closed("idle_timeout")
        super().timeout_keep_alive_handler()

    def _answered(self) -> bool:
        """No request is being answered on this connection."""
        return self.cycle is None or self.cycle.response_complete

    def _idle(self) -> None:
        """Wait for the next request under uvicorn's keep-alive timer (which
        a body read after its answer had stopped)."""
        if self.transport.is_closing():
            return
        self.guard.waiting(self)
        self._unset_keepalive_if_required()
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    # Deadlines

    def _start_head(self) -> None:
        self._in_head, self._head_seen, self._head_bytes = True, False, 0
        self.guard.waiting(self)
        self._arm(self.guard.limits.header_timeout_s, self._head_timed_out)

    def _head_timed_out(self) -> None:
        self._timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.keep_alive = False  # a pipelined head: close after the answer in progress
            return
        self.guard.closed("head_timeout")
        if not self._head_seen:
            self.transport.close()  # nothing was asked: nothing to answer
            return
        timeout = self.guard.limits.header_timeout_s
        self._answer_and_close(
            408, "Request Timeout", f"request head not received within {timeout:g} s"
        )

    def _body_timed_out(self) -> None:
        self._timer = None
        self.guard.closed("body_timeout")
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            protobuf = any(
                name == b"content-type" and value.split(b";")[0].strip().lower() == PROTOBUF
                for name, value in cycle.scope["headers"]
            )
            timeout = self.guard.limits.body_timeout_s
            message = f"request body not received within {timeout:g} s"
            self.transport.write(
                status_response(
                    408, "Request Timeout", DEADLINE_EXCEEDED, message, protobuf=protobuf
                )
            )
        if cycle is not None:  # the app's next receive() says the client is gone
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    def _answer_and_close(self, status: int, reason: str, message: str) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(status_response(status, reason, INVALID_ARGUMENT, message))
            self.transport.close()

    def _refuse(self, transport: asyncio.Transport) -> None:
        """503 to a connection past the bound; read until the client closes
        (briefly), so the answer is not lost to a reset. uvicorn's list of
        connections holds it meanwhile, so that a shutdown closes it too."""
        self._refused = True
        self.transport = transport
        self.connections.add(self)
        limit = self.guard.limits.max_connections
        transport.write(
            status_response(
                503,
                "Service Unavailable",
                UNAVAILABLE,
                f"collector busy: {limit} connections open, each with a request in progress; "
                "retry later",
                retry=True,
            )
        )
        self._lingers = self.guard.linger()
        if self._lingers:
            transport.write_eof()
            self._timer = self.loop.call_later(LINGER_S, transport.close)
        else:
            transport.close()

    def _arm(self, delay_s: float, action: Any) -> None:
        self._disarm()
        self._timer = self.loop.call_later(delay_s, action)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def protocol_class(guard: ConnectionGuard) -> type[GuardedHttpProtocol]:
    """uvicorn builds its protocol from a class: one per port, bound to its guard."""
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,), {"guard": guard})
