"""The recompute thread: recompute touched traces soon after each commit.

Commits hand it the rows they stored; it waits `delay` to let the rest of a
burst arrive (so a trace sent in 20 requests is not recomputed 20 times),
recomputes each touched trace from its span facts (cached, else read from a
snapshot), and gives the batch writer the runs to store. What else the
sweeper does (timers, sums, board, retention) is runs.maintenance.

Correct with several writers (other processes): each stored result carries
the span count it was computed from, checked inside the storing transaction
while that trace is locked (the session's register_traces); a trace that
changed meanwhile is recomputed instead of overwritten.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Timers, assemble_trace
from collector.errors import Overloaded, StoreUnavailable
from collector.metrics import Metrics
from collector.runs.cache import TraceCache
from collector.runs.queue import JobSink, TraceQueue
from collector.runs.store import (
    RunChanges,
    clear_pending,
    count_finalised,
    count_unfinalised,
    group_by_owner,
    load_trace_facts,
    replace_trace_runs,
    span_versions,
    version_of,
)
from collector.storage.engine import Database
from collector.storage.health import PROBE_EVERY_S
from collector.storage.session import SqlSession, in_chunks
from collector.types import Clock, TraceKey

log = logging.getLogger(__name__)
_MAX_TRACES_PER_TXN = 500
# A trace of at least this many spans waits _COOLING_FACTOR times its last
# recomputation's time before the next: at most 1/(1 + 1.5) of a core each.
_LARGE_TRACE_SPANS = 20_000
_COOLING_FACTOR = 1.5


class RunRecomputer:
    def __init__(
        self,
        db: Database,
        timers: Timers,
        clock: Clock,
        metrics: Metrics,
        queue: TraceQueue,
        jobs: JobSink,
        *,
        delay_s: float = 0.2,
        conventions_digest: str | None = None,
    ) -> None:
        self._db = db
        self._digest = conventions_digest  # what the stored spans were recognised under
        self._timers = timers
        self._clock = clock
        self._metrics = metrics
        self._queue = queue
        self._jobs = jobs
        self._delay_s = delay_s
        self._processing = threading.Lock()
        self._cache = TraceCache()
        self._cooling: dict[TraceKey, float] = {}  # large trace -> when it may go again
        self._thread = threading.Thread(target=self._run, name="run-recompute", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def has_pending(self) -> bool:
        return self._queue.has_pending()

    def stop(self) -> None:
        """Stop waiting, then recompute whatever is pending, large traces too."""
        self._queue.stop()
        self._thread.join(60)
        for _ in range(10):  # a trace that changed under us is queued again
            self.process_pending(all_now=True)
            if not self.has_pending():
                break

    def process_pending(self, *, all_now: bool = False) -> None:
        """Recompute every pending trace now and wait until its runs are stored.

        Serialised with the background thread, so a caller also waits for work
        that thread has already taken. A large trace recomputed a moment ago
        waits its turn (`_cooling`) unless `all_now`.
        """
        with self._processing:
            work, fresh = self._queue.take()
            for rows in fresh:
                self._cache.add_rows(rows)
            if not all_now:
                work = self._not_cooling(work)
            if work:
                try:
                    self.recompute(work)
                except Exception as exc:
                    if not self._db.health.failed(exc):
                        raise
                    self._queue.notify(work)  # the database is down: again once it is back
                    raise StoreUnavailable() from None

    @contextmanager
    def paused(self, traces: Iterable[TraceKey]) -> Iterator[None]:
        """No recomputation in this process while the block runs, and these
        traces' cached span facts forgotten before and after it: the block
        rewrites their stored recognition (runs.reclassify), which a
        recomputation from cached facts would otherwise undo."""
        with self._processing:
            for key in traces:
                self._cache.drop(key)
            try:
                yield
            finally:
                for key in traces:
                    self._cache.drop(key)

    def _not_cooling(self, work: set[TraceKey]) -> set[TraceKey]:
        """The traces that may be recomputed now; the others stay pending.

        Recomputing a trace costs time in proportion to its spans, and a trace
        that keeps growing (an agent session of 300,000 spans, sent 10,000 at
        a time) was reloaded and reassembled after every batch: a core at 82%
        and its run 22-39 s behind. After a recomputation that took t, the
        trace waits `_COOLING_FACTOR` x t, so such a trace takes a bounded
        share of a core while small traces go on at once."""
        if not self._cooling:
            return work
        now = time.monotonic()
        for key, until in list(self._cooling.items()):
            if until <= now:
                del self._cooling[key]
        waiting = work & self._cooling.keys()
        self._queue.notify(waiting)
        return work - waiting

    def recompute(self, traces: set[TraceKey]) -> None:
        waiting: list[tuple[str, list[str], Future[Any]]] = []
        for owner, trace_ids in group_by_owner(traces).items():
            for chunk in in_chunks(trace_ids, _MAX_TRACES_PER_TXN):
                waiting.append((owner, chunk, self._store(owner, chunk)))
        for owner, chunk, future in waiting:
            try:
                changed, stored = future.result()
            except Overloaded:
                changed, stored = chunk, RunChanges([], [])  # not stored: try again next round
            if changed:
                self._queue.notify({(owner, trace_id) for trace_id in changed})
            self._queue.notify(set(stored.recheck))  # runs.claims: other traces to redo
            count_finalised(self._metrics, (run.status for run in stored.finalised))
            count_unfinalised(self._metrics, stored.unfinalised)

    def _store(self, owner: str, trace_ids: list[str]) -> Future[Any]:
        facts = self._facts(owner, trace_ids)
        now = self._clock()
        assembled = {}
        for trace_id in trace_ids:
            began = time.monotonic()
            assembled[trace_id] = assemble_trace(
                trace_id,
                facts[trace_id],
                now,
                self._timers,
                keep_verdicts=False,
                conventions_digest=self._digest,
            )
            if len(facts[trace_id]) >= _LARGE_TRACE_SPANS:
                took = time.monotonic() - began
                self._cooling[(owner, trace_id)] = time.monotonic() + _COOLING_FACTOR * took

        def write(session: SqlSession) -> tuple[list[str], RunChanges]:
            current = span_versions(session, owner, trace_ids)
            changed = [t for t in trace_ids if current.get(t, (0, 0)) != version_of(facts[t])]
            for trace_id in changed:
                del assembled[trace_id]
                self._cache.drop((owner, trace_id))
            stored = replace_trace_runs(session, owner, assembled, now)
            clear_pending(session, owner, list(assembled))
            return changed, stored

        return self._jobs.submit_job(write, {(owner, trace_id) for trace_id in trace_ids})

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
            with self._db.reading() as session:
                loaded = load_trace_facts(session, owner, missing)
            for trace_id in missing:
                facts[trace_id] = loaded.get(trace_id, [])
                if len(facts[trace_id]) <= self._cache.max_spans // 4:
                    # a huge trace would push every other trace out of the cache
                    self._cache.put((owner, trace_id), facts[trace_id])
        return facts

    def _run(self) -> None:
        queue = self._queue
        while True:
            with queue.cond:
                while not queue.has_pending() and not queue.stopping:
                    queue.cond.wait()
                if queue.stopping:
                    return
            if self._delay_s:
                # Let the rest of a burst land: the full delay, although every
                # commit meanwhile notifies (a notify used to end the wait at once).
                deadline = time.monotonic() + self._delay_s
                with queue.cond:
                    while not queue.stopping and (left := deadline - time.monotonic()) > 0:
                        queue.cond.wait(left)
                    if queue.stopping:
                        return
            try:
                self.process_pending()
                if self._cooling and queue.has_pending():
                    time.sleep(self._delay_s or 0.05)  # only cooling traces may be left
            except StoreUnavailable:  # logged once by storage.health; not a busy loop meanwhile
                with queue.cond:
                    queue.cond.wait(PROBE_EVERY_S)
            except Exception:
                log.exception("run assembly failed; will retry")
