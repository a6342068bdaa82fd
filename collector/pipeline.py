"""Bounded ingest queue and ONE batch writer (group commit).

Many export requests are merged into one transaction; each request's future
resolves only after the transaction holding its spans has committed, so an
OK always means durable. A full queue, a closed pipeline or a failing
database is `Overloaded` (retryable), never a silent drop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from collector.errors import Overloaded
from collector.metrics import Metrics
from collector.storage.dialect import insert_ignore
from collector.storage.engine import Database
from collector.storage.tables import agents, spans

log = logging.getLogger(__name__)

TraceKey = tuple[str, str]  # (owner, trace_id)
MAX_BATCH_SPANS = 20_000


@dataclass
class Batch:
    """One export request's valid spans, waiting for their commit."""

    span_rows: list[dict[str, Any]]
    agent_rows: list[dict[str, Any]]
    traces: set[TraceKey]
    future: Future[None] = field(default_factory=Future)


class IngestPipeline:
    def __init__(
        self,
        db: Database,
        max_spans: int,
        on_committed: Callable[[set[TraceKey]], None],
        metrics: Metrics,
    ) -> None:
        self._db = db
        self._max_spans = max_spans
        self._on_committed = on_committed
        self._metrics = metrics
        self._queue: deque[Batch] = deque()
        self._queued_spans = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="batch-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, batch: Batch) -> Future[None]:
        """Queue a batch, or refuse it at once when the queue cannot take it."""
        size = len(batch.span_rows)
        with self._cond:
            if self._closing:
                raise Overloaded("collector is shutting down", retry_after_s=5)
            if self._queued_spans + size > self._max_spans and self._queue:
                raise Overloaded(
                    f"ingest queue full ({self._queued_spans} spans queued)", retry_after_s=1
                )
            self._queue.append(batch)
            self._queued_spans += size
            self._metrics.queue_depth.set(self._queued_spans)
            self._cond.notify()
        return batch.future

    def close(self, timeout: float = 30.0) -> None:
        """Stop accepting, drain and commit what is queued, then return."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join(timeout)

    def _take(self) -> list[Batch] | None:
        with self._cond:
            while not self._queue and not self._closing:
                self._cond.wait()
            if not self._queue:
                return None
            taken: list[Batch] = []
            count = 0
            while self._queue and (
                not taken or count + len(self._queue[0].span_rows) <= MAX_BATCH_SPANS
            ):
                batch = self._queue.popleft()
                taken.append(batch)
                count += len(batch.span_rows)
            self._queued_spans -= count
            self._metrics.queue_depth.set(self._queued_spans)
            return taken

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            self._commit(taken)

    def _commit(self, taken: list[Batch]) -> None:
        started = time.perf_counter()
        try:
            with self._db.writer.begin() as conn:
                insert_ignore(conn, agents, _unique_agents(b.agent_rows for b in taken))
                insert_ignore(conn, spans, [row for b in taken for row in b.span_rows])
        except SQLAlchemyError as exc:
            log.error("batch commit failed: %s", exc)
            error = Overloaded("database unavailable; retry later", retry_after_s=2)
            for batch in taken:
                batch.future.set_exception(error)
            return
        self._metrics.commit_seconds.observe(time.perf_counter() - started)
        for batch in taken:
            batch.future.set_result(None)
        touched: set[TraceKey] = set()
        for batch in taken:
            touched |= batch.traces
        self._on_committed(touched)


def _unique_agents(groups: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for rows in groups:
        for row in rows:
            seen.setdefault(row["id"], row)
    return list(seen.values())
