"""How many requests of the read API and the dashboard are answered at once.

Every page and API request runs its queries and rendering on a thread of
the one server process that also frames exports, commits them and assembles
runs. Unbounded, 200 keyless readers of the heaviest dashboard page took the
threads and the interpreter from ingest: another owner's exports fell from
9.9 to 5.1 a second (p99 23 ms -> 2.9 s) and `/healthz` took 4.25 s
(issue 39). So a bounded number of them run at once (`slots`); the rest
wait in line, a bounded line and for a bounded time, then are refused with
503 + `Retry-After` (docs/api.md "Errors"). The line is long on purpose: a
waiting request costs nothing, while a reader that asks again at once after
a 503 costs the event loop a request each time. With a line of 64, 200
such readers drew 4,590 refusals a second and ingest fell to 61% of its
rate; with 1,000, none was refused and it kept 91% (bench/read_flood.py,
docs/sizing.md "Reads and ingest"). Two slots, not more: the reads share
one interpreter, so a second keyless one at once added no reads a second
(52 against 60) and made the exports' and health checks' p99 four times longer.

Keyless requests come last: they may hold at most half of the slots and
half of the line, and a freed slot goes to a caller with a key first. A key
counts only if it authenticates (checked on a thread of its own, a few at a
time), so a made-up `authorization` header does not jump the line.

Never behind the gate: `/healthz` and `/readyz` (a load balancer must see a
busy collector as alive), and the routes given as `exempt` (the OTLP/HTTP
door, which has its own in-flight budget, collector.ingest.admission).

Plain ASGI, like api.app.RefuseNul: the OTLP/HTTP door shares this app, and
a refusal must cost next to nothing (its answer is rendered once).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from api.auth import KeyChecker, key_from_headers
from api.dashboard.pages import error_page

log = logging.getLogger(__name__)
HEALTH = frozenset({"/healthz", "/readyz"})
RETRY_AFTER_S = 1
# Keys checked at once off the event loop (one indexed read each, ~18 us on
# SQLite: collector.storage.keys); the rest wait for one of these threads.
KEY_CHECKS_AT_ONCE = 2


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """`slots` requests answered at once, `line` more waiting up to `wait_s`
    each; keyless requests hold at most half of each (at least one slot).
    `refused(keyed)` is called for each request refused."""

    slots: int = 2
    line: int = 512
    wait_s: float = 5.0
    refused: Callable[[bool], None] = lambda keyed: None

    def keyless_slots(self) -> int:
        return max(1, self.slots // 2)

    def keyless_line(self) -> int:
        return self.line // 2


DEFAULT_READ_LIMITS = ReadLimits()


class ReadGate:
    def __init__(
        self, app: ASGIApp, limits: ReadLimits, keys: KeyChecker, exempt: Iterable[str] = ()
    ) -> None:
        self.app = app
        self._limits = limits
        self._keys = keys
        self._exempt = HEALTH | frozenset(exempt)
        self._running = {True: 0, False: 0}  # keyed -> requests being answered
        self._lines: dict[bool, deque[asyncio.Future[None]]] = {True: deque(), False: deque()}
        self._key_checks = anyio.CapacityLimiter(KEY_CHECKS_AT_ONCE)
        detail = "the collector is answering as many reads as it can; retry later"
        retry = [(b"retry-after", str(RETRY_AFTER_S).encode())]
        as_json = JSONResponse({"detail": detail}, 503)
        as_page = error_page(503, detail)
        # Rendered once: a flood of refusals costs the loop next to nothing.
        self._refusals = {
            True: (bytes(as_json.body), as_json.raw_headers + retry),
            False: (bytes(as_page.body), as_page.raw_headers + retry),
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self._exempt:
            await self.app(scope, receive, send)
            return
        keyed = await self._keyed(scope)
        if not await self._enter(keyed):
            self._limits.refused(keyed)
            await self._refuse(scope, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._leave(keyed)

    async def _keyed(self, scope: Scope) -> bool:
        """Does the request carry a key that authenticates?"""
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope["headers"]
            if name.lower() in (b"authorization", b"x-api-key")
        }
        key = key_from_headers(headers)
        if key is None:
            return False
        try:
            principal = await anyio.to_thread.run_sync(
                self._keys.authenticate, key, limiter=self._key_checks
            )
        except Exception:  # the store is down: the route will say so; here it is keyless
            log.debug("key check failed at the read gate", exc_info=True)
            return False
        return principal is not None

    def _free(self, keyed: bool) -> bool:
        running = self._running[True] + self._running[False]
        if running >= self._limits.slots:
            return False
        return keyed or self._running[False] < self._limits.keyless_slots()

    async def _enter(self, keyed: bool) -> bool:
        """Take a slot now, or wait in line for one; False when refused."""
        line = self._lines[keyed]
        if not line and self._free(keyed):
            self._running[keyed] += 1
            return True
        room = self._limits.line if keyed else self._limits.keyless_line()
        if len(line) >= room:
            return False
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        line.append(ticket)
        try:
            await asyncio.wait({ticket}, timeout=self._limits.wait_s)
        except asyncio.CancelledError:
            if ticket.done():
                self._leave(keyed)  # given a slot as it was cancelled: pass it on
            else:
                line.remove(ticket)
            raise
        if ticket.done():
            return True
        line.remove(ticket)  # waited long enough
        return False

    def _leave(self, keyed: bool) -> None:
        """A slot is free: the next in line takes it, a keyed caller first."""
        self._running[keyed] -= 1
        for turn in (True, False):
            line = self._lines[turn]
            while line and self._free(turn):
                self._running[turn] += 1
                line.popleft().set_result(None)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        """503 + Retry-After: JSON for the API (as api.problem_answers), the
        dashboard's error page for its pages."""
        path = scope["path"]
        body, headers = self._refusals[path.startswith(("/api/", "/.well-known/", "/metrics"))]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})
