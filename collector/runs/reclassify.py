"""Reclassification (CONVENTIONS.md section 5): when the conventions change,
stored spans are recognised again and their runs recomputed, so counts do
not depend on when a span arrived.

A run records the digest of the conventions its spans were recognised
under; a run whose digest is not the current one (null: stored before
conventions) and that is not sealed is stale. The `Reclassifier` takes the
newest stale runs in batches, recognises every stored span of their traces
again from its bytes (assembly.recognise, as ingest does), writes the spans'
new recognition, and stores the traces' runs under the current digest, in
one transaction per owner. The runs' digests are the only progress marker:
a process killed mid-batch loses that batch's transaction and the next
start finds the same runs stale.

Several writers: a trace whose spans changed between the read and the
write (span_versions, as the recomputer checks) is read again, a few times;
the recomputer of this process is paused for the batch (RunRecomputer.paused)
so it cannot store runs from recognition cached before the batch. Sealed
runs (retention removed spans of their trace) keep their counts and are
counted apart. Who runs it: the server's sweeper-lease holder (runs.reclassifying),
or `badge-collector reclassify` on a stopped server.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import proto
from collector.assembly.facts import SpanFacts
from collector.assembly.recognise import recognise_stored
from collector.assembly.runs import Run, Timers, assemble_trace
from collector.conventions import ConventionSet
from collector.metrics import Metrics
from collector.runs.queue import JobSink
from collector.runs.run_rows import encode_facts
from collector.runs.store import (
    RunChanges,
    clear_pending,
    count_finalised,
    count_unfinalised,
    group_by_owner,
    replace_trace_runs,
    span_versions,
    version_of,
)
from collector.storage.engine import Database
from collector.storage.reclassify import (
    count_stale,
    seal_runs,
    stale_runs,
    stored_spans,
    update_recognition,
)
from collector.storage.session import SqlSession
from collector.storage.trace_spans import to_span_facts
from collector.types import Clock, TraceKey

log = logging.getLogger(__name__)

BATCH_RUNS = 50  # stale runs per batch: their traces' spans in one transaction per owner
_ATTEMPTS = 3  # reads of a trace that keeps changing under a batch, before it waits a pass

Paused = Callable[[Iterable[TraceKey]], AbstractContextManager[Any]]


@dataclass
class Progress:
    """Where a reclassification is: counted by runs."""

    reclassified: int = 0  # stale runs stored again under the current digest
    remaining: int = 0  # stale runs left (counted when a pass begins, then counted down)
    sealed: int = 0  # runs under another digest that keep their counts (sealed)
    given_up: int = 0  # runs whose trace kept changing: tried again next pass
    done: bool = False
    total: int = field(default=0, repr=False)  # remaining when the first pass began


class DirectJobs:
    """A JobSink without a batch writer (the CLI, no server running): each
    job is its own transaction, its traces locked first as the writer does."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def submit_job(
        self, write: Callable[[SqlSession], Any], traces: Iterable[TraceKey] = ()
    ) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            with self._db.writing() as session:
                session.register_traces(traces, self._clock())
                result = write(session)
        except Exception as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)
        return future


class Reclassifier:
    def __init__(
        self,
        db: Database,
        conventions: ConventionSet,
        timers: Timers,
        clock: Clock,
        jobs: JobSink,
        *,
        metrics: Metrics | None = None,
        agents: Sequence[str] | None = None,
        batch_runs: int = BATCH_RUNS,
        paused: Paused | None = None,
        recheck: Callable[[set[TraceKey]], None] | None = None,
    ) -> None:
        self._db = db
        self._conventions = conventions
        self.digest = conventions.digest
        self._timers = timers
        self._clock = clock
        self._jobs = jobs
        self._metrics = metrics
        self._agents = agents
        self._batch = batch_runs
        self._paused = paused
        self._recheck = recheck  # where other traces to recompute go (runs.claims)
        self._below: int | None = None  # the pass's cursor: runs.seq, downwards
        self._given_up: set[int] = set()  # seqs tried this pass whose trace kept changing
        self._more: set[TraceKey] = set()  # traces to redo with the next batch
        self._fixed_this_pass = 0
        self._seqs: dict[TraceKey, list[int]] = {}  # the batch's stale runs by trace
        self._spanless: set[TraceKey] = set()  # the batch's traces without spans
        self.progress = Progress()

    def count(self) -> Progress:
        """Count what is stale; a new pass starts from the newest run."""
        with self._db.reading() as session:
            found = count_stale(session, self.digest, self._agents)
        self._below = None
        self._given_up.clear()
        self._fixed_this_pass = 0
        self.progress.remaining, self.progress.sealed = found.remaining, found.sealed
        self.progress.total = self.progress.total or found.remaining
        self._show()
        return self.progress

    def step(self) -> bool:
        """One batch; False once a pass from the newest run found nothing to do."""
        with self._db.reading() as session:
            found = stale_runs(
                session, self.digest, below=self._below, limit=self._batch, agents=self._agents
            )
        if not found:
            if self._fixed_this_pass:  # runs a concurrent writer left stale: one more pass
                self.count()
                return True
            # A pass that fixed nothing: what is left (a trace that kept
            # changing, runs of a trace without spans) stays for the next start.
            with self._db.reading() as session:
                left = count_stale(session, self.digest, self._agents)
            self.progress.remaining, self.progress.sealed = left
            self.progress.done = True
            self._show()
            return False
        self._below = min(run.seq for run in found)
        wanted = [run for run in found if run.seq not in self._given_up]
        traces = {(run.owner, run.trace_id) for run in wanted} | self._more
        self._more = set()
        stale_of = self._stale_runs(traces)
        self._seqs = defaultdict(list)
        for run in wanted:
            self._seqs[(run.owner, run.trace_id)].append(run.seq)
        self._spanless = set()
        failed = self._reclassify(traces)
        done = sum(count for key, count in stale_of.items() if key not in failed | self._spanless)
        self.progress.sealed += sum(len(self._seqs.get(key, ())) for key in self._spanless)
        self._given_up |= {run.seq for run in wanted if (run.owner, run.trace_id) in failed}
        self.progress.reclassified += done
        self._fixed_this_pass += done
        self.progress.remaining = max(0, self.progress.remaining - done)
        self.progress.given_up = len(self._given_up)
        if self._metrics is not None:
            self._metrics.runs_reclassified.inc(done)
        self._show()
        return True

    def run(self, stop: Callable[[], bool] = lambda: False) -> Progress:
        """Every stale run, batch after batch, until done or `stop()`."""
        self.count()
        while not stop() and self.step():
            pass
        return self.progress

    def _show(self) -> None:
        if self._metrics is not None:
            self._metrics.runs_reclassify_remaining.set(self.progress.remaining)
            self._metrics.runs_reclassify_sealed.set(self.progress.sealed)

    def _stale_runs(self, traces: set[TraceKey]) -> dict[TraceKey, int]:
        """How many stale, unsealed runs each trace has now (what a batch fixes)."""
        counts: dict[TraceKey, int] = {}
        with self._db.reading() as session:
            for owner, trace_ids in group_by_owner(traces).items():
                found = session.select_runs_of_traces(
                    ("owner", "trace_id", "conventions_digest", "sealed_at"), owner, trace_ids
                )
                for run_owner, trace_id, digest, sealed_at in found:
                    if run_owner == owner and digest != self.digest and sealed_at is None:
                        key = (owner, trace_id)
                        counts[key] = counts.get(key, 0) + 1
        return counts

    def _reclassify(self, traces: set[TraceKey]) -> set[TraceKey]:
        """Recognise these traces' spans again and store their runs; returns
        the traces that changed under every attempt."""
        pending = set(traces)
        for _ in range(_ATTEMPTS):
            if not pending:
                break
            with self._paused(pending) if self._paused is not None else nullcontext():
                pending = self._attempt(pending)
        return pending

    def _attempt(self, traces: set[TraceKey]) -> set[TraceKey]:
        changed: set[TraceKey] = set()
        waiting = []
        for owner, trace_ids in group_by_owner(traces).items():
            batch = self._recognised(owner, trace_ids)
            keys = {(owner, trace_id) for trace_id in trace_ids}
            waiting.append((owner, self._jobs.submit_job(self._writer(owner, *batch), keys)))
        for owner, future in waiting:
            moved, stored, spanless = future.result()
            changed |= {(owner, trace_id) for trace_id in moved}
            self._spanless |= {(owner, trace_id) for trace_id in spanless}
            self._more |= set(stored.recheck)
            if self._metrics is not None:
                count_finalised(self._metrics, (run.status for run in stored.finalised))
                count_unfinalised(self._metrics, stored.unfinalised)
        if self._more and self._recheck is not None:
            self._recheck(self._more)
            self._more = set()
        return changed

    def _recognised(
        self, owner: str, trace_ids: list[str]
    ) -> tuple[dict[str, list[Run]], dict[str, tuple[int, int]], dict[str, list[Any]], float]:
        """Each trace's spans recognised again: its runs, the span version they
        are of, and the spans whose stored recognition changed."""
        by_trace: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        with self._db.reading() as session:
            for row in stored_spans(session, owner, trace_ids):
                by_trace[row[1]].append(row)
        now = self._clock()
        assembled: dict[str, list[Run]] = {}
        versions: dict[str, tuple[int, int]] = {}
        changes: dict[str, list[Any]] = {}
        # One decode for the batch: a request per trace cost more than its spans.
        ordered = [row for trace_id in trace_ids for row in by_trace.get(trace_id, [])]
        stored = [proto.StoredSpan(bytes(r[15] or b""), r[16], bytes(r[17])) for r in ordered]
        recognised = iter(recognise_stored(self._conventions, stored))
        for trace_id in trace_ids:
            rows = by_trace.get(trace_id, [])
            facts: list[SpanFacts] = []
            changes[trace_id] = []
            for row in rows:
                again = next(recognised)
                text = encode_facts(again.facts)
                if (again.role, again.rule, text) != (row[12], row[13], row[14]):
                    changes[trace_id].append((again.role, again.rule, text, row[0]))
                facts.append(to_span_facts((*row[2:12], again.role, again.rule, text)))
            versions[trace_id] = version_of(facts)
            assembled[trace_id] = assemble_trace(
                trace_id,
                facts,
                now,
                self._timers,
                keep_verdicts=False,
                conventions_digest=self.digest,
            )
        return assembled, versions, changes, now

    def _writer(
        self,
        owner: str,
        assembled: dict[str, list[Run]],
        versions: dict[str, tuple[int, int]],
        changes: dict[str, list[Any]],
        now: float,
    ) -> Callable[[SqlSession], tuple[list[str], RunChanges, list[str]]]:
        seqs = self._seqs

        def write(session: SqlSession) -> tuple[list[str], RunChanges, list[str]]:
            current = span_versions(session, owner, list(assembled))
            moved = [t for t in assembled if current.get(t, (0, 0)) != versions[t]]
            # A trace with no span left lost them to retention (before runs were
            # sealed, migration 0014): its runs keep their counts, sealed now.
            spanless = [t for t in assembled if t not in moved and versions[t] == (0, 0)]
            seal_runs(session, [n for t in spanless for n in seqs.get((owner, t), ())], now)
            kept = {t: runs for t, runs in assembled.items() if t not in moved + spanless}
            update_recognition(session, [change for t in kept for change in changes[t]])
            stored = replace_trace_runs(session, owner, kept, now, reclassified=True)
            clear_pending(session, owner, list(kept))
            return moved, stored, spanless

        return write
