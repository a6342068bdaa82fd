"""What waits to be recomputed: the traces commits touched and the rows they
stored, filled by the writer's commit hook (runs.fresh) and by maintenance
(due timers, stale marks), drained by the recomputer.

Built before the writer and handed to both sides, so the writer, the
recomputer and maintenance need no two-phase wiring.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, Protocol

from collector.storage.rows import SpanRow
from collector.storage.session import SqlSession
from collector.types import TraceKey


class JobSink(Protocol):
    """Where runs and maintenance steps are written: the batch writer's jobs,
    committed among the exports' group commits (one writer per process)."""

    def submit_job(
        self, write: Callable[[SqlSession], Any], traces: Iterable[TraceKey] = ()
    ) -> Future[Any]: ...


class TraceQueue:
    """Pending traces and freshly committed rows, with a condition to wait on."""

    def __init__(self) -> None:
        self._pending: set[TraceKey] = set()
        self._fresh_rows: list[list[SpanRow]] = []
        self.cond = threading.Condition()
        self.stopping = False

    def committed(self, rows: list[SpanRow], traces: set[TraceKey]) -> None:
        """A commit's rows and the traces it touched; cheap, the work is the recomputer's."""
        with self.cond:
            self._fresh_rows.append(rows)
            self._pending |= traces
            self.cond.notify()

    def notify(self, traces: set[TraceKey]) -> None:
        if traces:
            with self.cond:
                self._pending |= traces
                self.cond.notify()

    def take(self) -> tuple[set[TraceKey], list[list[SpanRow]]]:
        """Everything pending, emptied."""
        with self.cond:
            work, self._pending = self._pending, set()
            fresh, self._fresh_rows = self._fresh_rows, []
        return work, fresh

    def has_pending(self) -> bool:
        with self.cond:
            return bool(self._pending or self._fresh_rows)

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
