"""How much export work may be in flight: checked before a body is decoded.

Every export request holds a `Reservation` from the moment its first bytes
are in hand until it is answered: while its body is read, waits for a
decoder, is decoded, and waits in the writer's queue for its commit. Past
`max_inflight_bytes` the request is refused at once as overload (503 +
Retry-After / UNAVAILABLE + RetryInfo, docs/otlp.md "Limits"), so memory
and answer times stay bounded however many senders there are. Without it,
an unbounded decoder backlog let a flood reach 2.8 GB and 122 s answers
before the queue bound, checked only after decoding, refused anything.

A reservation grows with the bytes that have arrived, never with what a
header promises: two uploads that declared 16 MiB each and then sent one
byte used to hold the whole 32 MiB budget, and every other owner got 503
for as long as they kept the connection open (issue 29). One owner may
hold at most `max_bytes_per_owner` of it, so a key that stalls or floods
still leaves room for the others. After decoding, a request's reservation
grows to what its rows take (a gzip body is small on the wire and large
decoded); that growth can refuse it too. One request is always admitted
when its owner has nothing else in flight and the collector has room, so a
limit below the body limit still lets every valid request through alone.
"""

from __future__ import annotations

import threading
from collections import Counter
from types import TracebackType

from collector.errors import Overloaded
from collector.metrics import Metrics


class InflightBudget:
    """Bytes admitted and not yet answered, against one limit and a per-owner share."""

    def __init__(self, max_bytes: int, metrics: Metrics, max_bytes_per_owner: int = 0) -> None:
        self.max_bytes = max_bytes
        self.max_bytes_per_owner = max_bytes_per_owner or max_bytes
        self._used = 0
        self._by_owner: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._metrics = metrics

    def reserve(self, owner: str) -> Reservation:
        """An empty reservation; grow it as the request's bytes arrive."""
        return Reservation(self, owner)

    def used(self, owner: str | None = None) -> int:
        with self._lock:
            return self._used if owner is None else self._by_owner[owner]

    def _take(self, owner: str, nbytes: int) -> None:
        with self._lock:
            if self._used and self._used + nbytes > self.max_bytes:
                raise Overloaded(
                    f"collector busy: {self._used} bytes of exports in flight "
                    f"(limit {self.max_bytes}); retry later",
                    retry_after_s=1,
                )
            held = self._by_owner[owner]
            if held and held + nbytes > self.max_bytes_per_owner:
                raise Overloaded(
                    f"collector busy: {held} bytes of this key's exports in flight "
                    f"(limit {self.max_bytes_per_owner} per owner); retry later",
                    retry_after_s=1,
                )
            self._used += nbytes
            self._by_owner[owner] = held + nbytes
            self._metrics.inflight_bytes.set(self._used)

    def _give(self, owner: str, nbytes: int) -> None:
        with self._lock:
            self._used -= nbytes
            left = self._by_owner[owner] - nbytes
            if left:
                self._by_owner[owner] = left
            else:
                del self._by_owner[owner]  # owners come and go; keep the map small
            self._metrics.inflight_bytes.set(self._used)


class Reservation:
    """One request's share of the budget; a context manager that returns it."""

    def __init__(self, budget: InflightBudget, owner: str) -> None:
        self._budget = budget
        self._owner = owner
        self.bytes = 0

    def grow_to(self, nbytes: int) -> None:
        """Hold at least `nbytes`; Overloaded if the budget cannot give them."""
        if nbytes > self.bytes:
            self._budget._take(self._owner, nbytes - self.bytes)
            self.bytes = nbytes

    def release(self) -> None:
        if self.bytes:
            self._budget._give(self._owner, self.bytes)
            self.bytes = 0

    def __enter__(self) -> Reservation:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
