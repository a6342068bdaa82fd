"""How much export work may be in flight: checked before a body is decoded.

Every export request holds a `Reservation` from the moment its first bytes
are in hand until it is answered: while its body is read, waits for a
decoder, is decoded, and waits in the writer's queue for its commit. Past
`max_inflight_bytes` the request is refused at once as overload (503 +
Retry-After / UNAVAILABLE + RetryInfo, docs/otlp.md "Overload"), so memory
and answer times stay bounded however many senders there are. Without it,
an unbounded decoder backlog let a flood reach 2.8 GB and 122 s answers
before the queue bound, checked only after decoding, refused anything.

The budget is shared work-conservingly (issue 39): an owner alone may use
all of it, and shares apply only among owners that compete. Competing
owners are those with bytes in flight and those refused in the last
`WAITER_MEMORY_S` (they are waiting for room: a refused export comes back
after its Retry-After). Each competing owner's fair share is the budget
divided by their number. Beyond its fair share an owner may use only what
no one waiting asks for: once an owner below its share has been refused,
owners above theirs get nothing more until it is served or stops asking.
That is max-min fairness with the demand an exporter shows by retrying:
a fixed per-owner share refused 16 exporters of one owner at the SDK's
batch size (18 to 160 of 395 requests) while nobody else was sending.

Three rules keep that bounded and unstarvable:
- an owner's only request is never held back by its share, and may even go
  past the budget when no other request is past it: every request within
  the documented limits (body, spans) is admitted alone, however large it
  decodes (a 10 MiB body of 10,000 spans decoded past a 16 MiB share and
  was refused with 503 on every retry of an idle collector). So the bytes
  in flight stay below the budget plus one request;
- bodies still arriving of one owner hold at most half of the budget
  (beyond its only request): an upload that stalls holds what it sent
  (never what it declared, issue 29), and a key whose uploads stall cannot
  take the room the others need until the body timeout frees it;
- the reservation grows after decoding to what its rows take (a gzip body
  is small on the wire and large decoded); that growth can refuse it too.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType

from collector.errors import Overloaded
from collector.metrics import Metrics

# How long a refused owner counts as waiting for room. Exporters retry an
# overload after the server's delay (Retry-After / RetryInfo: 1 s) or their
# own backoff's first steps (1 s, then 2 s, in the OTel SDKs): 3 s covers
# both, and an owner that stops asking frees the others' room after that.
WAITER_MEMORY_S = 3.0


class InflightBudget:
    """Bytes admitted and not yet answered, shared max-min fairly among owners."""

    def __init__(
        self,
        max_bytes: int,
        metrics: Metrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes = max_bytes
        self._used = 0
        self._held: Counter[str] = Counter()
        self._arriving: Counter[str] = Counter()  # of `_held`: bodies still being received
        self._refused_at: dict[str, float] = {}  # owner -> when it was last refused
        self._past_budget: Reservation | None = None  # the one request allowed past it
        self._lock = threading.Lock()
        self._metrics = metrics
        self._clock = clock

    def reserve(self, owner: str) -> Reservation:
        """An empty reservation; grow it as the request's bytes arrive."""
        return Reservation(self, owner)

    def used(self, owner: str | None = None) -> int:
        with self._lock:
            return self._used if owner is None else self._held[owner]

    def fair_share(self, owner: str) -> int:
        """The bytes `owner` is sure of now: the budget over the competing owners."""
        with self._lock:
            return self._share(owner, self._waiters(self._clock()))

    def _take(self, reservation: Reservation, nbytes: int, arriving: bool) -> None:
        with self._lock:
            now = self._clock()
            refusal = self._refusal(reservation, nbytes, arriving, now)
            if refusal is not None:
                self._refused_at[reservation.owner] = now
                raise Overloaded(refusal + "; retry later", retry_after_s=1)
            self._used += nbytes
            self._held[reservation.owner] += nbytes
            if arriving:
                self._arriving[reservation.owner] += nbytes
            if self._used > self.max_bytes:
                self._past_budget = reservation
            self._metrics.inflight_bytes.set(self._used)

    def _refusal(
        self, reservation: Reservation, nbytes: int, arriving: bool, now: float
    ) -> str | None:
        """Why `reservation` may not grow by `nbytes` now, or None if it may."""
        owner, held = reservation.owner, self._held[reservation.owner]
        room = self._used + nbytes <= self.max_bytes
        busy = f"collector busy: {self._used} bytes of exports in flight (limit {self.max_bytes})"
        if held == reservation.bytes:  # the owner's only request (docs/otlp.md "Overload")
            if room or self._past_budget in (None, reservation):
                return None
            return busy + ", one request already past it"
        if arriving and self._arriving[owner] + nbytes > self.max_bytes // 2:
            return (
                f"collector busy: {self._arriving[owner]} bytes of this key's uploads are "
                f"still arriving (at most half of {self.max_bytes})"
            )
        if not room:
            return busy
        waiters = self._waiters(now)
        share = self._share(owner, waiters)
        if held + nbytes > share and any(
            other != owner and self._held[other] < share for other in waiters
        ):
            return (
                f"collector busy: this key holds {held} bytes in flight, past its fair "
                f"share ({share}) while another key waits"
            )
        return None

    def _waiters(self, now: float) -> set[str]:
        """Owners refused lately (forgetting the others: owners come and go)."""
        for owner in [o for o, at in self._refused_at.items() if now - at > WAITER_MEMORY_S]:
            del self._refused_at[owner]
        return set(self._refused_at)

    def _share(self, owner: str, waiters: set[str]) -> int:
        competing = len(self._held.keys() | waiters | {owner})
        return self.max_bytes // competing

    def _arrived(self, owner: str, nbytes: int) -> None:
        with self._lock:
            self._forget(self._arriving, owner, nbytes)

    def _give(self, reservation: Reservation, nbytes: int, arriving: int) -> None:
        with self._lock:
            self._used -= nbytes
            self._forget(self._held, reservation.owner, nbytes)
            self._forget(self._arriving, reservation.owner, arriving)
            if self._past_budget is reservation or self._used <= self.max_bytes:
                self._past_budget = None
            self._metrics.inflight_bytes.set(self._used)

    @staticmethod
    def _forget(counts: Counter[str], owner: str, nbytes: int) -> None:
        left = counts[owner] - nbytes
        if left:
            counts[owner] = left
        else:
            del counts[owner]  # owners come and go; keep the maps small


class Reservation:
    """One request's share of the budget; a context manager that returns it."""

    def __init__(self, budget: InflightBudget, owner: str) -> None:
        self._budget = budget
        self.owner = owner
        self.bytes = 0
        self._arriving = 0  # of `bytes`: the body, while it is still being received

    def grow_to(self, nbytes: int, *, arriving: bool = False) -> None:
        """Hold at least `nbytes`; Overloaded if the budget cannot give them.
        `arriving`: they are a body still being received (see `arrived`)."""
        if nbytes > self.bytes:
            self._budget._take(self, nbytes - self.bytes, arriving)
            if arriving:
                self._arriving += nbytes - self.bytes
            self.bytes = nbytes

    def arrived(self) -> None:
        """The whole body is in: it no longer counts among bytes still arriving."""
        if self._arriving:
            self._budget._arrived(self.owner, self._arriving)
            self._arriving = 0

    def release(self) -> None:
        if self.bytes:
            self._budget._give(self, self.bytes, self._arriving)
            self.bytes = self._arriving = 0

    def __enter__(self) -> Reservation:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
