"""Run storage: span facts of touched traces in, their runs out, written once.

Stores runs (with the `terminal_at` rule and the row of `run_rows`, and the
grades posted for them: `storage.grades`), the
single-request runs stored with their spans, the pending marks (traces whose
runs are not recomputed yet) and the runs-finalised metric, each in one place.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import delete, select

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Run
from collector.metrics import Metrics
from collector.runs.claims import applied, resolve
from collector.runs.run_rows import run_row, terminal_at
from collector.storage.board import enter_new_agents
from collector.storage.grades import apply_grades
from collector.storage.rows import RUN_COLUMNS, RunRow
from collector.storage.session import SqlSession, in_chunks
from collector.storage.tables import pending_traces, runs, traces
from collector.storage.trace_spans import FACT_COLUMNS, to_span_facts
from collector.types import TraceKey


def _stale(stored_under: set[str | None], run: Run) -> str | None:
    """The other digest a trace's stored runs name (null, stored before
    conventions, first): the one the run keeps until it is reclassified."""
    others = stored_under - {run.conventions_digest}
    return None if None in others else min(d for d in others if d is not None)


def _run_id(row: RunRow) -> str:
    """Run rows are written in id order: concurrent writers wait, never cycle."""
    return row.id


def count_finalised(metrics: Metrics, statuses: Iterable[str]) -> None:
    """The runs-finalised metric: one count each time a run became terminal."""
    for status in statuses:
        metrics.runs_finalised.labels(status).inc()


def count_unfinalised(metrics: Metrics, statuses: Iterable[str]) -> None:
    """Terminal runs a recomputation removed or found running again, by the
    status they had: finalised minus these is the terminal runs stored."""
    for status in statuses:
        metrics.runs_unfinalised.labels(status).inc()


class RunChanges(NamedTuple):
    """What a recomputation's write did to terminal runs, counted once it
    commits, and the other traces it marked to recompute (runs.claims)."""

    finalised: list[Run]  # became terminal
    unfinalised: list[str]  # the statuses of terminal runs removed or running again
    recheck: frozenset[TraceKey] = frozenset()


def load_trace_facts(
    session: SqlSession, owner: str, trace_ids: Sequence[str]
) -> dict[str, list[SpanFacts]]:
    found: dict[str, list[SpanFacts]] = defaultdict(list)
    for chunk in in_chunks(trace_ids):
        for row in session.select_trace_spans(FACT_COLUMNS, owner, chunk):
            found[row[0]].append(to_span_facts(row[1:]))
    return found


def replace_trace_runs(
    session: SqlSession,
    owner: str,
    assembled: dict[str, list[Run]],
    now: float,
    *,
    reclassified: bool = False,
) -> RunChanges:
    """Write the new runs of these traces; drop runs the traces no longer hold.

    `terminal_at` is the collector clock when a run first became terminal
    (docs/runs.md "Delivery in any order"); it survives recomputation. Returns
    the runs newly terminal and the terminal runs removed or running again.

    Unless every span was `reclassified` under the runs' digest, a trace
    whose stored runs name another digest keeps that one: its older spans'
    stored recognition is what the runs were assembled from, and the stale
    digest is what sends the trace to reclassification (runs.reclassify).
    """
    # A grader's run key and screening stay the grader's (runs.claims).
    claims = resolve(session, owner, [run for group in assembled.values() for run in group], now)
    assembled = {
        trace_id: applied(claims, group, dataclasses.replace)
        for trace_id, group in assembled.items()
    }
    trace_ids = list(assembled)
    existing: dict[str, float | None] = {}
    status_of: dict[str, str] = {}
    sealed: set[str] = set()  # retention removed spans of them: left as they are
    digests: dict[str, set[str | None]] = defaultdict(set)  # trace -> its stored runs' digests
    keep = {run.id for group in assembled.values() for run in group}
    wanted = set(trace_ids)
    for chunk in in_chunks(trace_ids):
        found = session.select_runs_of_traces(
            ("id", "terminal_at", "owner", "trace_id", "sealed_at", "status", "conventions_digest"),
            owner,
            chunk,
        )
        for run_id, stored_at, run_owner, trace_id, sealed_at, status, digest in found:
            # Before migration 0012 SQLite gave an emptied table's last number
            # again: a run kept from a trace retention removed may carry it.
            if run_owner == owner and trace_id in wanted:
                existing[run_id], status_of[run_id] = stored_at, status
                if sealed_at is not None:
                    sealed.add(run_id)
                elif not reclassified:
                    digests[trace_id].add(digest)
    # A run stored under an earlier number of its trace (retention removed the
    # trace row with its last span) is still found by its id.
    for run_id, stored_at, sealed_at, status in session.select_runs_by_id(
        ("id", "terminal_at", "sealed_at", "status"), keep - existing.keys()
    ):
        existing[run_id], status_of[run_id] = stored_at, status
        if sealed_at is not None:
            sealed.add(run_id)
    removed = [r for r in existing if r not in keep and r not in sealed]
    session.delete_runs(removed)
    unfinalised = [status_of[r] for r in removed if existing[r] is not None]
    for run_id, replaced in claims.displaced.items():
        # Another trace's run that held a grader's run key: this run is a new
        # one under its id, and that one is counted again where it goes aside.
        if existing.pop(run_id, None) is not None:
            unfinalised.append(replaced.status)
    rows: list[RunRow] = []
    finalised: list[Run] = []
    for trace_id, group in assembled.items():
        stored_under = digests.get(trace_id, set())
        for run in group:
            if run.id in sealed:  # a late span of a sealed run adds nothing to it
                continue
            if run.conventions_digest is not None and stored_under - {run.conventions_digest}:
                run = dataclasses.replace(run, conventions_digest=_stale(stored_under, run))
            before = existing.get(run.id)
            at = terminal_at(run, before, now)
            if at is not None and before is None:
                finalised.append(run)
            elif at is None and before is not None:  # terminal, now running again
                unfinalised.append(status_of[run.id])
            rows.append(run_row(owner, run, at, now))
    rows.sort(key=_run_id)
    session.upsert_runs(runs, RUN_COLUMNS, rows)
    apply_grades(session, [row.id for row in rows])  # a recomputation keeps the grade
    enter_new_agents(session, rows, now)  # listed when their runs are visible
    return RunChanges(finalised, unfinalised, frozenset(claims.recheck))


class FreshStored(NamedTuple):
    """What storing runs from single requests did."""

    traces: set[str]  # the traces whose runs were stored with their spans
    recheck: set[TraceKey]  # other traces marked to recompute (runs.claims)
    unfinalised: list[str]  # statuses of terminal runs of other traces replaced


def store_fresh_runs(
    session: SqlSession, owner: str, runs_by_trace: dict[str, list[RunRow]], now: float
) -> FreshStored:
    """Store runs assembled from one request, for traces with no stored span yet.

    Must run before that request's spans are inserted: a trace the database
    already holds spans of is left to the recomputer.
    """
    trace_ids = list(runs_by_trace)
    stored = span_counts(session, owner, trace_ids)
    fresh = {t for t in trace_ids if not stored.get(t)}
    rows = [row for t in fresh for row in runs_by_trace[t]]
    claims = resolve(session, owner, rows, now)  # runs.claims, as for a recomputation
    rows = sorted(applied(claims, rows, RunRow._replace), key=_run_id)
    session.upsert_runs(runs, RUN_COLUMNS, rows)
    apply_grades(session, [row.id for row in rows])  # a grade posted before the spans
    enter_new_agents(session, rows, now)  # listed when their runs are visible
    replaced = [held.status for held in claims.displaced.values() if held.terminal_at is not None]
    return FreshStored(fresh, claims.recheck, replaced)


def span_counts(session: SqlSession, owner: str, trace_ids: Sequence[str]) -> dict[str, int]:
    """Spans stored per trace (none: left out)."""
    numbers = session.trace_numbers([(owner, trace_id) for trace_id in trace_ids])
    by_number = {number: trace_id for (_, trace_id), number in numbers.items()}
    counts = session.count_spans_by_number(sorted(by_number))
    return {by_number[number]: count for number, count in counts.items()}


SpanVersion = tuple[int, int]  # (spans, spans from a grader key)


def span_versions(
    session: SqlSession, owner: str, trace_ids: Sequence[str]
) -> dict[str, SpanVersion]:
    """What a recomputation was based on, per trace: its spans, and those a
    grader key sent. A grader's span that took the place of another's under
    the same identity (storage.span_identity) leaves the first count
    as it was, and raises the second."""
    numbers = session.trace_numbers([(owner, trace_id) for trace_id in trace_ids])
    by_number = {number: trace_id for (_, trace_id), number in numbers.items()}
    counts = session.count_spans_by_number(sorted(by_number))
    graders = session.count_grader_spans_by_number(sorted(counts))
    return {by_number[number]: (count, graders.get(number, 0)) for number, count in counts.items()}


def version_of(facts: Sequence[SpanFacts]) -> SpanVersion:
    """The version of the spans a recomputation read (`span_versions`)."""
    return len(facts), sum(1 for span in facts if span.grader)


def due_traces(session: SqlSession, now: float, limit: int = 5000) -> set[tuple[str, str]]:
    """Traces with a run whose timer (orphan grace, run timeout) has come due."""
    rows = session.execute(
        select(runs.c.owner, runs.c.trace_id)
        .where(runs.c.check_at.is_not(None), runs.c.check_at <= now)
        .limit(limit)
    )
    return {(r.owner, r.trace_id) for r in rows}


def stale_pending(
    session: SqlSession, marked_before: float, limit: int = 5000
) -> set[tuple[str, str]]:
    """Pending traces (spans stored, runs not recomputed) marked before a time:
    left by a process that stopped before recomputing them."""
    rows = session.execute(
        select(traces.c.owner, traces.c.trace_id)
        .select_from(pending_traces.join(traces, traces.c.id == pending_traces.c.trace_ref))
        .where(pending_traces.c.marked_at < marked_before)
        .limit(limit)
    )
    return {(r.owner, r.trace_id) for r in rows}


def clear_pending(session: SqlSession, owner: str, trace_ids: Sequence[str]) -> None:
    """These traces' runs are stored as of their spans now: unmark them."""
    numbers = session.trace_numbers([(owner, trace_id) for trace_id in trace_ids])
    for chunk in in_chunks(sorted(numbers.values())):
        session.execute(delete(pending_traces).where(pending_traces.c.trace_ref.in_(chunk)))


def group_by_owner(keys: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for owner, trace_id in sorted(keys):
        grouped[owner].append(trace_id)
    return grouped
