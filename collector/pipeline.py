"""Bounded ingest queue and ONE batch writer (group commit).

Many export requests are merged into one transaction; each request's future
resolves only after the transaction holding its spans has committed, so an
OK always means durable. A full queue, a closed pipeline or a failing
database is `Overloaded` (retryable), never a silent drop.

The same writer also stores the runs the assembler computed, in the same
transactions: SQLite has one write lock, and a second writer thread only
made the two wait for each other.
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

from sqlalchemy.engine import Connection

from collector.errors import BadRequest, Overloaded
from collector.metrics import Metrics
from collector.storage.dialect import (
    is_unavailable,
    is_unstorable,
    mark_pending,
    register_traces,
)
from collector.storage.engine import Database
from collector.storage.run_writes import RUN_COLUMNS, store_fresh_runs
from collector.storage.writes import write_batch

STATUS = RUN_COLUMNS.index("status")

log = logging.getLogger(__name__)

TraceKey = tuple[str, str]  # (owner, trace_id)
MAX_BATCH_SPANS = 20_000


@dataclass
class Batch:
    """One export request's valid spans, waiting for their commit."""

    span_rows: list[tuple[Any, ...]]  # in storage.writes.SPAN_COLUMNS order
    agent_rows: list[tuple[Any, ...]]  # in storage.writes.AGENT_COLUMNS order
    traces: set[TraceKey]
    resource_rows: list[tuple[Any, ...]] = field(default_factory=list)  # RESOURCE_COLUMNS
    # trace id -> run rows assembled from this batch alone (decoding.DecodedRows.runs)
    runs: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    future: Future[None] = field(default_factory=Future)

    @property
    def owner(self) -> str:
        return str(self.span_rows[0][0]) if self.span_rows else ""


@dataclass
class Job:
    """Any other write for the writer's next transaction (runs, retention)."""

    write: Callable[[Connection], Any]
    traces: frozenset[TraceKey] = frozenset()  # registered (locked) before any write
    future: Future[Any] = field(default_factory=Future)


class IngestPipeline:
    def __init__(
        self,
        db: Database,
        max_spans: int,
        on_committed: Callable[[list[tuple[Any, ...]], set[TraceKey]], None],
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._clock = clock
        self._max_spans = max_spans
        self._on_committed = on_committed
        self._metrics = metrics
        self._queue: deque[Batch] = deque()
        self._jobs: deque[Job] = deque()
        self._queued_spans = 0
        self._cond = threading.Condition()
        self._closing = False  # no new span batches
        self._stopping = False  # writer exits once both queues are empty
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
            self._cond.notify_all()
        return batch.future

    def submit_job(
        self, write: Callable[[Connection], Any], traces: Iterable[TraceKey] = ()
    ) -> Future[Any]:
        job = Job(write, frozenset(traces))
        with self._cond:
            if self._stopping:
                job.future.set_exception(Overloaded("writer stopped"))
                return job.future
            self._jobs.append(job)
            self._cond.notify_all()
        return job.future

    def close(self, timeout: float = 60.0) -> None:
        """Stop taking spans; return once every queued batch is committed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._closing = True
            while self._queue and time.monotonic() < deadline:
                self._cond.wait(0.05)

    def shutdown(self, timeout: float = 60.0) -> None:
        """After close(): finish the remaining jobs and stop the writer."""
        with self._cond:
            self._closing = self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _take(self) -> tuple[list[Batch], list[Job]] | None:
        with self._cond:
            while not self._queue and not self._jobs and not self._stopping:
                self._cond.wait()
            if not self._queue and not self._jobs:
                return None
            taken: list[Batch] = []
            count = 0
            while self._queue and (
                not taken or count + len(self._queue[0].span_rows) <= MAX_BATCH_SPANS
            ):
                batch = self._queue.popleft()
                taken.append(batch)
                count += len(batch.span_rows)
            jobs = list(self._jobs)
            self._jobs.clear()
            self._queued_spans -= count
            self._metrics.queue_depth.set(self._queued_spans)
            self._cond.notify_all()
            return taken, jobs

    def _run(self) -> None:
        while (work := self._take()) is not None:
            self._commit(*work)

    def _commit(self, taken: list[Batch], jobs: list[Job]) -> None:
        """One transaction for everything taken; a failure that is not the
        database's own is split, so one request's data never fails the others."""
        started = time.perf_counter()
        rows = [row for b in taken for row in b.span_rows]
        touched: set[TraceKey] = set().union(*(batch.traces for batch in taken))
        fresh = _fresh_runs(taken)
        done: set[TraceKey] = set()
        try:
            with self._db.writer.begin() as conn:
                written = touched.union(*(job.traces for job in jobs))
                now = self._clock()
                register_traces(conn, written, now)  # PostgreSQL: locked
                # Jobs first: a run computed from N spans is checked against
                # the N spans stored before this batch adds more. Likewise runs
                # assembled from one request count only for traces not stored yet.
                results = [job.write(conn) for job in jobs]
                for owner, by_trace in fresh.items():
                    done |= {(owner, t) for t in store_fresh_runs(conn, owner, by_trace)}
                write_batch(
                    conn,
                    _unique_agents(b.agent_rows for b in taken),
                    rows,
                    [row for b in taken for row in b.resource_rows],
                )
                # Committed with the spans, so a crash before their runs are
                # recomputed leaves a mark the sweeper finds (assembler.sweep).
                mark_pending(conn, touched - done, now)
        except Exception as exc:  # SQLAlchemy's or the raw driver's
            self._failed(taken, jobs, exc)
            return
        if taken:
            self._metrics.commit_seconds.observe(time.perf_counter() - started)
        if taken:  # before acknowledging, so an OK'd trace is already queued
            if done:
                touched -= done
                rows = [row for row in rows if (row[0], row[1]) not in done]
                self._count_finalised(fresh, done)
            self._on_committed(rows, touched)
        for batch in taken:
            batch.future.set_result(None)
        for job, result in zip(jobs, results, strict=True):
            job.future.set_result(result)

    def _failed(self, taken: list[Batch], jobs: list[Job], exc: Exception) -> None:
        """Answer what a failed transaction held, or commit its parts alone.

        A database that is down fails everyone alike, retryable. Any other
        failure may be one request's data (validation should have refused
        it: OTLP.md "Limits"), so each request and job is retried in a
        transaction of its own. A request whose values alone cannot be stored
        is refused with 400, never 503, which an exporter would retry forever.
        """
        if len(taken) + len(jobs) > 1 and not is_unavailable(exc):
            log.warning("group commit failed (%s); committing its parts one by one", exc)
            for batch in taken:
                self._commit([batch], [])
            for job in jobs:
                self._commit([], [job])
            return
        if taken and taken[0].runs and not is_unavailable(exc):
            taken[0].runs = {}  # its pre-assembled runs: the assembler redoes them
            self._commit(taken, [])
            return
        error: Exception
        if taken and is_unstorable(exc):
            log.error("spans refused by the database: %r", exc)
            reason = str(exc).splitlines()[0][:200]
            error = BadRequest(f"the spans hold a value the database cannot store: {reason}")
        else:
            log.error("batch commit failed: %s", exc)
            error = Overloaded("database unavailable; retry later", retry_after_s=2)
        for batch in taken:
            batch.future.set_exception(error)
        for job in jobs:
            job.future.set_exception(error if isinstance(error, Overloaded) else exc)

    def _count_finalised(
        self, fresh: dict[str, dict[str, list[tuple[Any, ...]]]], done: set[TraceKey]
    ) -> None:
        for owner, trace_id in done:
            for row in fresh[owner][trace_id]:
                if row[STATUS] != "running":
                    self._metrics.runs_finalised.labels(row[STATUS]).inc()


def _fresh_runs(taken: list[Batch]) -> dict[str, dict[str, list[tuple[Any, ...]]]]:
    """Pre-assembled runs by owner, for traces that only one batch here carries."""
    seen: dict[TraceKey, int] = {}
    for batch in taken:
        for owner, trace_id in batch.traces:
            seen[(owner, trace_id)] = seen.get((owner, trace_id), 0) + 1
    fresh: dict[str, dict[str, list[tuple[Any, ...]]]] = {}
    for batch in taken:
        for trace_id, run_rows in batch.runs.items():
            if seen.get((batch.owner, trace_id)) == 1:
                fresh.setdefault(batch.owner, {})[trace_id] = run_rows
    return fresh


def _unique_agents(groups: Iterable[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """One row per agent id, sorted: concurrent inserts of one new agent wait in order."""
    seen: dict[Any, tuple[Any, ...]] = {}
    for rows in groups:
        for row in rows:
            seen.setdefault(row[0], row)
    return [seen[key] for key in sorted(seen)]
