"""The recompute thread: recompute touched traces soon after each commit.

Commits hand it the rows they stored; it waits `delay` to let the rest of a
burst arrive (so a trace sent in 20 requests is not recomputed 20 times),
recomputes each touched trace from its span facts (cached, else read from a
snapshot), and gives the batch writer the runs to store. A sweep turns timers
(orphan grace, run timeout) into status changes and applies span retention.

Correct with several writers (other processes): each stored result carries
the span count it was computed from, checked inside the storing transaction
while that trace is locked (storage.dialect.register_traces); a trace that
changed meanwhile is recomputed instead of overwritten.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, Protocol

from sqlalchemy.engine import Connection

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Run, Timers, assemble_trace
from collector.errors import Overloaded
from collector.metrics import Metrics
from collector.runs.cache import TraceCache
from collector.runs.store import (
    clear_pending,
    count_finalised,
    due_traces,
    group_by_owner,
    load_trace_facts,
    replace_trace_runs,
    span_counts,
    stale_pending,
)
from collector.storage.dialect import (
    fold_run_deltas,
    in_chunks,
    merge_key_tails,
    vacuum_retained,
)
from collector.storage.engine import Database
from collector.storage.rows import SpanRow
from collector.storage.sweeper_lease import SweeperLease
from collector.storage.writes import delete_old_spans

log = logging.getLogger(__name__)
Clock = Callable[[], float]
TraceKey = tuple[str, str]
_MAX_TRACES_PER_TXN = 500
# A pending mark this old was left by a process that stopped (or is far
# behind): the sweeper recomputes its trace. At start every mark is taken.
_PENDING_STALE_S = 30.0


class JobSink(Protocol):
    """Where recomputed runs are written: the batch writer's job queue."""

    def submit_job(
        self, write: Callable[[Connection], Any], traces: Iterable[TraceKey] = ()
    ) -> Future[Any]: ...


class RunRecomputer:
    def __init__(
        self,
        db: Database,
        timers: Timers,
        clock: Clock,
        metrics: Metrics,
        *,
        delay_s: float = 0.2,
        sweep_interval_s: float = 1.0,
        retention_s: float = 30 * 86400.0,
        retention_every_s: float = 3600.0,
    ) -> None:
        self._db = db
        self._timers = timers
        self._clock = clock
        self._metrics = metrics
        self._delay_s = delay_s
        self._sweep_interval_s = sweep_interval_s
        self._retention_s = retention_s
        self._retention_every_s = retention_every_s
        self._writer: JobSink | None = None
        self._pending: set[TraceKey] = set()
        self._fresh_rows: list[list[SpanRow]] = []
        self._cond = threading.Condition()
        self._processing = threading.Lock()
        self._stopping = False
        self._last_retention = 0.0
        self._swept = False  # the first sweep takes every pending mark
        self._retention: threading.Thread | None = None
        self._cache = TraceCache()
        self._lease = SweeperLease(db)
        self._thread = threading.Thread(target=self._run, name="run-recompute", daemon=True)

    def attach(self, writer: JobSink) -> None:
        self._writer = writer

    def start(self) -> None:
        self._thread.start()

    def committed(self, rows: list[SpanRow], traces: set[TraceKey]) -> None:
        """Called by the batch writer after a commit; cheap, the work is ours."""
        with self._cond:
            self._fresh_rows.append(rows)
            self._pending |= traces
            self._cond.notify()

    def notify(self, traces: set[TraceKey]) -> None:
        if traces:
            with self._cond:
                self._pending |= traces
                self._cond.notify()

    def has_pending(self) -> bool:
        with self._cond:
            return bool(self._pending or self._fresh_rows)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(60)
        if self._retention is not None:
            self._retention.join(60)
        self._lease.release()
        for _ in range(10):  # a trace that changed under us is queued again
            self.process_pending()
            if not self.has_pending():
                break

    def process_pending(self) -> None:
        """Recompute every pending trace now and wait until its runs are stored.

        Serialised with the background thread, so a caller also waits for work
        that thread has already taken.
        """
        with self._processing:
            with self._cond:
                work, self._pending = self._pending, set()
                fresh, self._fresh_rows = self._fresh_rows, []
            for rows in fresh:
                self._cache.add_rows(rows)
            if work:
                self.recompute(work)

    def sweep(self) -> None:
        """Queue traces whose timers are due, and apply span retention.

        With several processes on one database only the lease holder sweeps.
        """
        if not self._lease.held():
            return
        now = self._clock()
        with self._db.reader.connect() as conn:
            due = due_traces(conn, now)
            due |= stale_pending(conn, now - _PENDING_STALE_S if self._swept else math.inf)
        self._swept = True
        self.notify(due)
        # The kept run sums: pending changes folded in (storage.kept_totals).
        self._write(fold_run_deltas)
        if self._db.recent_keys is not None:
            # SQLite: recent traces and runs into their indexes, in bulk.
            self._write(merge_key_tails)
        passing = self._retention is not None and self._retention.is_alive()
        if now - self._last_retention >= self._retention_every_s and not passing:
            self._last_retention = now
            # Its own thread: a pass of many steps must not hold up recomputation.
            self._retention = threading.Thread(
                target=self._retain, args=(now - self._retention_s,), name="retention", daemon=True
            )
            self._retention.start()

    def _retain(self, cutoff: float) -> None:
        """A retention pass, in steps: each is one job among the exports'
        commits, so a pass that deletes millions never stops ingest."""
        total = 0
        try:
            while deleted := self._write(
                lambda conn: delete_old_spans(conn, cutoff, self._clock())
            ).result():
                total += deleted
                if self._stopping:
                    break
        except Exception:
            log.exception("retention pass failed; the next one goes on")
        if total:
            log.info("retention: deleted %d spans and trace rows", total)
            self._vacuum()

    def _vacuum(self) -> None:
        """After a pass that deleted rows: their space, free for new ones."""
        try:
            with self._db.writer.connect() as conn:
                vacuum_retained(conn.execution_options(isolation_level="AUTOCOMMIT"))
        except Exception:
            log.exception("vacuum after retention failed; autovacuum will do it")

    def recompute(self, traces: set[TraceKey]) -> None:
        waiting: list[tuple[str, list[str], Future[Any]]] = []
        for owner, trace_ids in group_by_owner(traces).items():
            for chunk in in_chunks(trace_ids, _MAX_TRACES_PER_TXN):
                waiting.append((owner, chunk, self._store(owner, chunk)))
        for owner, chunk, future in waiting:
            try:
                changed, finalised = future.result()
            except Overloaded:
                changed, finalised = chunk, []  # not stored: try again next round
            if changed:
                self.notify({(owner, trace_id) for trace_id in changed})
            count_finalised(self._metrics, (run.status for run in finalised))

    def _store(self, owner: str, trace_ids: list[str]) -> Future[Any]:
        facts = self._facts(owner, trace_ids)
        now = self._clock()
        assembled = {
            trace_id: assemble_trace(trace_id, facts[trace_id], now, self._timers)
            for trace_id in trace_ids
        }

        def write(conn: Connection) -> tuple[list[str], list[Run]]:
            current = span_counts(conn, owner, trace_ids)
            changed = [t for t in trace_ids if current.get(t, 0) != len(facts[t])]
            for trace_id in changed:
                del assembled[trace_id]
                self._cache.drop((owner, trace_id))
            finalised = replace_trace_runs(conn, owner, assembled, now)
            clear_pending(conn, owner, list(assembled))
            return changed, finalised

        return self._write(write, {(owner, trace_id) for trace_id in trace_ids})

    def _facts(self, owner: str, trace_ids: list[str]) -> dict[str, list[SpanFacts]]:
        facts: dict[str, list[SpanFacts]] = {}
        missing = []
        for trace_id in trace_ids:
            cached = self._cache.get((owner, trace_id))
            if cached is None:
                missing.append(trace_id)
            else:
                facts[trace_id] = cached
        if missing:
            with self._db.reader.connect() as conn:
                loaded = load_trace_facts(conn, owner, missing)
            for trace_id in missing:
                facts[trace_id] = loaded.get(trace_id, [])
                self._cache.put((owner, trace_id), facts[trace_id])
        return facts

    def _write(
        self, write: Callable[[Connection], Any], traces: Iterable[TraceKey] = ()
    ) -> Future[Any]:
        if self._writer is None:
            raise RuntimeError("RunRecomputer.attach(writer) was not called")
        return self._writer.submit_job(write, traces)

    def _run(self) -> None:
        next_sweep = 0.0
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(self._sweep_interval_s)
                if self._stopping:
                    return
            if self._pending and self._delay_s:
                # Let the rest of a burst land: the full delay, although every
                # commit meanwhile notifies (a notify used to end the wait at once).
                deadline = time.monotonic() + self._delay_s
                with self._cond:
                    while not self._stopping and (left := deadline - time.monotonic()) > 0:
                        self._cond.wait(left)
                    if self._stopping:
                        return
            try:
                self.process_pending()
                if self._clock() >= next_sweep:
                    next_sweep = self._clock() + self._sweep_interval_s
                    self.sweep()
            except Exception:
                log.exception("run assembly failed; will retry")
