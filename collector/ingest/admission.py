"""How much export work may be in flight: checked before a body is decoded.

Every export request holds a `Reservation` from the moment its size is known
(the declared Content-Length, the bytes read so far, or a gRPC message) until
it is answered: while its body is read, waits for a decoder, is decoded, and
waits in the writer's queue for its commit. Past `max_inflight_bytes` the
request is refused at once as overload (503 + Retry-After / UNAVAILABLE +
RetryInfo, docs/otlp.md "Limits"), so memory and answer times stay bounded
however many senders there are. Without it, an unbounded decoder backlog
let a flood reach 2.8 GB and 122 s answers before the queue bound, checked
only after decoding, refused anything.

After decoding, a request's reservation grows to what its rows take (a
gzip body is small on the wire and large decoded); that growth can refuse it
too. One request is always admitted when nothing else is in flight, so a
limit below the body limit still lets every valid request through alone.
"""

from __future__ import annotations

import threading
from types import TracebackType

from collector.errors import Overloaded
from collector.metrics import Metrics


class InflightBudget:
    """Bytes admitted and not yet answered, against one limit."""

    def __init__(self, max_bytes: int, metrics: Metrics) -> None:
        self.max_bytes = max_bytes
        self._used = 0
        self._lock = threading.Lock()
        self._metrics = metrics

    def reserve(self) -> Reservation:
        """An empty reservation; grow it as the request's size becomes known."""
        return Reservation(self)

    def _take(self, nbytes: int) -> None:
        with self._lock:
            if self._used and self._used + nbytes > self.max_bytes:
                raise Overloaded(
                    f"collector busy: {self._used} bytes of exports in flight "
                    f"(limit {self.max_bytes}); retry later",
                    retry_after_s=1,
                )
            self._used += nbytes
            self._metrics.inflight_bytes.set(self._used)

    def _give(self, nbytes: int) -> None:
        with self._lock:
            self._used -= nbytes
            self._metrics.inflight_bytes.set(self._used)


class Reservation:
    """One request's share of the budget; a context manager that returns it."""

    def __init__(self, budget: InflightBudget) -> None:
        self._budget = budget
        self.bytes = 0

    def grow_to(self, nbytes: int) -> None:
        """Hold at least `nbytes`; Overloaded if the budget cannot give them."""
        if nbytes > self.bytes:
            self._budget._take(nbytes - self.bytes)
            self.bytes = nbytes

    def release(self) -> None:
        if self.bytes:
            self._budget._give(self.bytes)
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
