"""Runs stored with their spans: the runs package's part of every span commit
(`writer.CommitHook`).

Most traces arrive whole in one request. Their runs are assembled in the
decoder process from that request's spans (`preassemble`) and stored here, in
the same transaction as the spans, if the database holds no span of the trace
yet; every other touched trace is marked pending and recomputed by
`recompute.RunRecomputer` after the commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from collector.metrics import Metrics
from collector.runs.preassemble import FreshRuns
from collector.runs.queue import TraceQueue
from collector.runs.store import count_finalised, count_unfinalised, store_fresh_runs
from collector.storage.rows import SpanRow
from collector.storage.session import SqlSession
from collector.types import TraceKey


class Batch(Protocol):
    """What this hook reads of a writer batch (collector.writer.Batch); runs
    and the writer are siblings, so neither imports the other."""

    owner: str
    span_rows: list[SpanRow]
    traces: set[TraceKey]
    attached: Any  # FreshRuns, or None


class _Committed(NamedTuple):
    stored: set[TraceKey]  # traces whose runs went in with their spans
    touched: set[TraceKey]
    recheck: set[TraceKey]  # other traces to recompute (runs.claims)
    unfinalised: list[str]  # statuses of terminal runs of other traces replaced


class RunCommitHook:
    """In the transaction: store fresh runs, mark the rest pending. After it:
    count the runs that finished, and hand the rest to the recomputer."""

    def __init__(self, queue: TraceQueue, metrics: Metrics) -> None:
        self._queue = queue
        self._metrics = metrics

    def in_transaction(self, session: SqlSession, batches: Sequence[Batch], now: float) -> Any:
        stored: set[TraceKey] = set()
        recheck: set[TraceKey] = set()
        unfinalised: list[str] = []
        for owner, by_trace in _fresh_runs(batches).items():
            done = store_fresh_runs(session, owner, by_trace, now)
            stored |= {(owner, t) for t in done.traces}
            recheck |= done.recheck
            unfinalised += done.unfinalised
        touched: set[TraceKey] = set().union(*(b.traces for b in batches))
        # Committed with the spans, so a crash before their runs are recomputed
        # leaves a mark the sweeper finds (RunRecomputer.sweep).
        session.mark_pending(touched - stored, now)
        return _Committed(stored, touched, recheck, unfinalised)

    def after_commit(self, batches: Sequence[Batch], state: Any) -> None:
        committed: _Committed = state
        stored = committed.stored
        if stored:
            count_finalised(
                self._metrics,
                (
                    row.status
                    for b in batches
                    for trace_id, rows in (b.attached or {}).items()
                    if (b.owner, trace_id) in stored
                    for row in rows
                    if row.terminal_at is not None
                ),
            )
        rows = [
            row
            for b in batches
            for row in b.span_rows
            if not stored or (row.owner, row.trace_id) not in stored
        ]
        count_unfinalised(self._metrics, committed.unfinalised)
        self._queue.committed(rows, (committed.touched - stored) | committed.recheck)


def _fresh_runs(batches: Sequence[Batch]) -> dict[str, FreshRuns]:
    """Pre-assembled runs by owner, for traces that only one batch here carries."""
    seen: dict[TraceKey, int] = {}
    for batch in batches:
        for key in batch.traces:
            seen[key] = seen.get(key, 0) + 1
    fresh: dict[str, FreshRuns] = {}
    for batch in batches:
        attached: FreshRuns = batch.attached or {}
        for trace_id, rows in attached.items():
            if seen.get((batch.owner, trace_id)) == 1:
                fresh.setdefault(batch.owner, {})[trace_id] = rows
    return fresh
