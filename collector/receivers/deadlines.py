"""A deadline for each gRPC call still waiting for its message, on one thread.

grpcio's synchronous server gives a call a handler thread before the call's
message is read, and reads it without a timeout: a client that opens a
stream and never sends held that thread until it went away (issue 29: 33
such streams took all 32). The handler arms a deadline here before it reads
and disarms it once the message is in; a deadline that fires ends the call.
One thread and a heap serve every call: a `threading.Timer` per call would
start a thread per export.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(order=True)
class Deadline:
    """One armed deadline (Deadlines.arm); Deadlines.disarm it when done."""

    at: float
    seq: int
    action: Callable[[], None] = field(compare=False)
    armed: bool = field(default=True, compare=False)


class Deadlines:
    def __init__(self, name: str) -> None:
        self._heap: list[Deadline] = []
        self._seq = itertools.count()
        self._changed = threading.Condition()
        self._closed = False
        self._disarmed = 0  # entries in the heap that will never fire
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def arm(self, delay_s: float, action: Callable[[], None]) -> Deadline:
        """Call `action` (on this object's thread) in `delay_s` unless disarmed first."""
        deadline = Deadline(time.monotonic() + delay_s, next(self._seq), action)
        with self._changed:
            heapq.heappush(self._heap, deadline)
            if self._heap[0] is deadline:
                self._changed.notify()
        return deadline

    def disarm(self, deadline: Deadline) -> bool:
        """Never call its action; False if too late (it has been called).

        A disarmed deadline stays in the heap until it comes up, unless
        disarmed ones are most of the heap: then the heap is rebuilt, so a
        high call rate does not keep a long tail of dead entries."""
        with self._changed:
            if not deadline.armed:
                return False
            deadline.armed = False
            self._disarmed += 1
            if self._disarmed > 1024 and self._disarmed * 2 > len(self._heap):
                self._heap = [entry for entry in self._heap if entry.armed]
                heapq.heapify(self._heap)
                self._disarmed = 0
            return True

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._changed:
                due = self._due()
                while due is None:
                    if self._closed:
                        return
                    wait = self._heap[0].at - time.monotonic() if self._heap else None
                    self._changed.wait(wait)
                    due = self._due()
            try:
                due.action()
            except Exception:  # one failed action must not stop the others' deadlines
                log.exception("deadline action failed")

    def _due(self) -> Deadline | None:
        """The next armed deadline that has come, dropping disarmed ones (lock held)."""
        now = time.monotonic()
        while self._heap and (not self._heap[0].armed or self._heap[0].at <= now):
            deadline = heapq.heappop(self._heap)
            if deadline.armed:
                deadline.armed = False
                return deadline
            self._disarmed -= 1
        return None
