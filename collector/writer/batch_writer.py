"""Bounded ingest queue and ONE batch writer (group commit).

Many export requests are merged into one transaction; each request's future
resolves only after the transaction holding its spans has committed, so an
OK always means durable. A full queue, a closed writer or a failing
database is `Overloaded` (retryable), never a silent drop.

The writer also judges when an unavailable database is back
(storage.health): while it is marked down, every transaction carries a probe
write, and one is tried every `PROBE_EVERY_S` with nothing queued, so
/readyz turns ready again without waiting for an export.

The writer knows spans, not runs: a `CommitHook` (the runs package's) acts
inside each transaction that holds span batches, before their spans are
inserted, and again after it commits. Other writes come as `Job`s into the
same transactions: SQLite has one write lock, and a second writer thread
only made the two wait for each other.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from collector.errors import BadRequest, Overloaded, StoreUnavailable
from collector.metrics import Metrics
from collector.storage.engine import Database
from collector.storage.failures import is_unavailable, is_unstorable
from collector.storage.health import PROBE_EVERY_S, probe_write
from collector.storage.rows import AgentRow, ResourceRow, SpanRow
from collector.storage.session import SqlSession
from collector.storage.writes import write_agents, write_batch
from collector.types import TraceKey
from collector.writer.unrecognised import UnrecognisedSpans

log = logging.getLogger(__name__)

MAX_BATCH_SPANS = 20_000


@dataclass
class Batch:
    """One export request's valid spans, waiting for their commit."""

    owner: str
    span_rows: list[SpanRow]
    agent_rows: list[AgentRow]
    resource_rows: list[ResourceRow]
    traces: set[TraceKey]
    # What ingest attached for the commit hook (the runs package: runs
    # assembled from this request alone); the writer never reads it.
    attached: Any = None
    future: Future[None] = field(default_factory=Future)


@dataclass
class Job:
    """Any other write for the writer's next transaction (runs, retention)."""

    write: Callable[[SqlSession], Any]
    traces: frozenset[TraceKey] = frozenset()  # registered (locked) before any write
    future: Future[Any] = field(default_factory=Future)


class CommitHook(Protocol):
    """Work that belongs in the transaction of span batches, and after it."""

    def in_transaction(self, session: SqlSession, batches: Sequence[Batch], now: float) -> Any:
        """Runs before the batches' spans are inserted; its result goes to after_commit."""

    def after_commit(self, batches: Sequence[Batch], state: Any) -> None:
        """Runs once they are committed, before any export is answered."""


class BatchWriter:
    def __init__(
        self,
        db: Database,
        max_spans: int,
        hook: CommitHook,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._clock = clock
        self._max_spans = max_spans
        self._hook = hook
        self._metrics = metrics
        self._unrecognised = UnrecognisedSpans(metrics.spans_unrecognised)
        self._queue: deque[Batch] = deque()
        self._jobs: deque[Job] = deque()
        self._queued_spans = 0
        self._cond = threading.Condition()
        self._closing = False  # no new span batches
        self._stopping = False  # writer exits once both queues are empty
        self._next_probe = 0.0  # monotonic: when to try a write while the database is down
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
        self, write: Callable[[SqlSession], Any], traces: Iterable[TraceKey] = ()
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
        """What the next transaction holds; nothing at all when a probe is
        due; None once stopping with both queues empty."""
        with self._cond:
            while not self._queue and not self._jobs and not self._stopping:
                if self._db.health.down and time.monotonic() >= self._next_probe:
                    return [], []
                # Woken by a submit; else once a probe period, to see an
                # outage another thread met (a read, a key lookup).
                self._cond.wait(PROBE_EVERY_S)
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
        started, cpu = time.perf_counter(), time.thread_time()
        health = self._db.health
        probing = health.down
        try:
            with self._db.writing() as session:
                if probing:
                    probe_write(session)
                now = self._clock()
                traces = set().union(*(b.traces for b in taken), *(j.traces for j in jobs))
                session.register_traces(traces, now)  # PostgreSQL: locked
                # Jobs first: a run computed from N spans is checked against
                # the N spans stored before this batch adds more.
                results = [job.write(session) for job in jobs]
                # New agents before the hook: the runs it stores enter theirs
                # on the board in this transaction (storage.board.enter_new_agents).
                write_agents(session, _unique_agents(b.agent_rows for b in taken))
                state = self._hook.in_transaction(session, taken, now) if taken else None
                write_batch(
                    session,
                    [],
                    [row for b in taken for row in b.span_rows],
                    [row for b in taken for row in b.resource_rows],
                )
        except Exception as exc:  # SQLAlchemy's or the raw driver's
            if probing:
                self._next_probe = time.monotonic() + PROBE_EVERY_S
            self._failed(taken, jobs, exc)
            return
        if probing:
            health.recovered()
        if taken:  # before acknowledging, so an OK'd trace is already queued
            self._metrics.commit_seconds.observe(time.perf_counter() - started)
            # Once, here: a failed transaction counted nothing, and its parts
            # retried alone (_failed) count as each commits.
            self._unrecognised.count(row for b in taken for row in b.span_rows)
            self._hook.after_commit(taken, state)
            self._metrics.ingest_cpu_seconds.labels("write").inc(time.thread_time() - cpu)
        for batch in taken:
            batch.future.set_result(None)
        for job, result in zip(jobs, results, strict=True):
            job.future.set_result(result)

    def _failed(self, taken: list[Batch], jobs: list[Job], exc: Exception) -> None:
        """Answer what a failed transaction held, or commit its parts alone.

        A database that is down fails everyone alike, retryable. Any other
        failure may be one request's data (validation should have refused
        it: docs/otlp.md "Limits"), so each request and job is retried in a
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
        if taken and taken[0].attached is not None and not is_unavailable(exc):
            taken[0].attached = None  # e.g. its pre-assembled runs: recomputed later
            self._commit(taken, [])
            return
        error: Exception
        if self._db.health.failed(exc):  # logged there, once per outage
            error = StoreUnavailable()
        elif taken and is_unstorable(exc):
            log.error("spans refused by the database: %r", exc)
            reason = str(exc).splitlines()[0][:200]
            error = BadRequest(f"the spans hold a value the database cannot store: {reason}")
        else:
            log.error("batch commit failed: %s", exc)
            error = Overloaded("the batch could not be stored; retry later", retry_after_s=2)
        for batch in taken:
            batch.future.set_exception(error)
        for job in jobs:
            job.future.set_exception(error if isinstance(error, Overloaded) else exc)


def _unique_agents(groups: Iterable[list[AgentRow]]) -> list[AgentRow]:
    """One row per agent id, sorted: concurrent inserts of one new agent wait in order."""
    seen: dict[str, AgentRow] = {}
    for rows in groups:
        for row in rows:
            seen.setdefault(row.id, row)
    return [seen[key] for key in sorted(seen)]
