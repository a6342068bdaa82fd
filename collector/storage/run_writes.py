"""Load span facts of touched traces, and replace those traces' runs."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Run
from collector.storage.dialect import (
    delete_unused_resources,
    delete_unused_traces,
    select_in,
    select_trace_spans,
    upsert_rows,
)
from collector.storage.tables import pending_traces, runs, spans, trace_spans, traces

TERMINAL = frozenset({"completed", "failed", "timeout"})
_CHUNK = 400  # ids per IN (...) list, under every dialect's bind limit

FACT_COLUMNS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "agent_id",
    "name",
    "start_ns",
    "end_ns",
    "status_code",
    "flags",
    "received_at",
    "grader",
    "role",
    "rule",
    "facts",
)
RUN_COLUMNS = tuple(c.name for c in runs.columns)

# The `facts` column: compact JSON, written at ingest, read by to_span_facts.
# A bound encoder: json.dumps(..., separators=...) builds a new one per call.
encode_facts = json.JSONEncoder(separators=(",", ":")).encode


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    """IN (...) lists of at most _CHUNK ids."""
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def _run_id(row: tuple[Any, ...]) -> str:
    """Run rows are written in id order: concurrent writers wait, never cycle."""
    return str(row[0])


def to_span_facts(values: Sequence[Any]) -> SpanFacts:
    """Stored columns (FACT_COLUMNS after trace_id, in order) -> SpanFacts."""
    span_id, parent, agent, name, start, end, code, flags, got, grader, role, rule, facts = values
    return SpanFacts(
        span_id,
        parent,
        agent,
        name,
        start,
        end,
        code,
        flags,
        got,
        bool(grader),
        role,
        rule,
        json.loads(facts),
    )


def load_trace_facts(
    conn: Connection, owner: str, trace_ids: Sequence[str]
) -> dict[str, list[SpanFacts]]:
    found: dict[str, list[SpanFacts]] = defaultdict(list)
    for chunk in _chunks(trace_ids):
        for row in select_trace_spans(conn, FACT_COLUMNS, owner, chunk):
            found[row[0]].append(to_span_facts(row[1:]))
    return found


def replace_trace_runs(
    conn: Connection, owner: str, assembled: dict[str, list[Run]], now: float
) -> list[Run]:
    """Write the new runs of these traces; drop runs the traces no longer hold.

    `terminal_at` is the collector clock when a run first became terminal
    (RUNS.md "Delivery"); it survives recomputation. Returns newly terminal runs.
    """
    trace_ids = list(assembled)
    existing: dict[str, float | None] = {}
    for chunk in _chunks(trace_ids):
        for run_id, terminal_at in select_in(
            conn, runs, ("id", "terminal_at"), {"owner": owner}, "trace_id", chunk
        ):
            existing[run_id] = terminal_at
    keep = {run.id for group in assembled.values() for run in group}
    stale = [run_id for run_id in existing if run_id not in keep]
    for chunk in _chunks(stale):
        conn.execute(delete(runs).where(runs.c.id.in_(chunk)))
    rows: list[tuple[Any, ...]] = []
    finalised: list[Run] = []
    for group in assembled.values():
        for run in group:
            terminal_at = existing.get(run.id)
            if run.status not in TERMINAL:
                terminal_at = None
            elif terminal_at is None:
                terminal_at = now
                finalised.append(run)
            rows.append(run_row(owner, run, terminal_at, now))
    upsert_rows(conn, runs, RUN_COLUMNS, sorted(rows, key=_run_id), key=("id",))
    return finalised


def run_row(owner: str, run: Run, terminal_at: float | None, now: float) -> tuple[Any, ...]:
    """A run as a row in RUN_COLUMNS order, built as one tuple (once per run at
    ingest); tests/collector/test_run_rows.py checks every value's column."""
    tool_calls = [
        {
            "name": t.name,
            "span_id": t.span_id,
            "start_ns": t.start_ns,
            "end_ns": t.end_ns,
            "status_code": t.status_code,
        }
        for t in run.tool_calls
    ]
    return (
        run.id,
        owner,
        run.agent_id,
        run.trace_id,
        run.run_key,
        run.root_span_id,
        run.task_id,
        run.status,
        run.success,
        run.success_source,
        run.start_ns,
        run.end_ns,
        run.latency_ms,
        run.steps,
        run.tool_errors,
        run.llm_calls,
        run.input_tokens,
        run.output_tokens,
        run.cost_usd,
        run.cost_source,
        run.error_class,
        run.span_count,
        run.has_agent_span,
        run.last_received_at,
        run.check_at,
        terminal_at,
        json.dumps(tool_calls),
        now,
    )


def store_fresh_runs(
    conn: Connection, owner: str, runs_by_trace: dict[str, list[tuple[Any, ...]]]
) -> set[str]:
    """Store runs assembled from one request, for traces with no stored span yet.

    Must run before that request's spans are inserted: a trace the database
    already holds spans of is left to the assembler. Returns the stored traces.
    """
    trace_ids = list(runs_by_trace)
    stored = span_counts(conn, owner, trace_ids)
    fresh = {t for t in trace_ids if not stored.get(t)}
    rows = sorted((row for t in fresh for row in runs_by_trace[t]), key=_run_id)
    upsert_rows(conn, runs, RUN_COLUMNS, rows, key=("id",))
    return fresh


def span_counts(conn: Connection, owner: str, trace_ids: Sequence[str]) -> dict[str, int]:
    """Spans stored per trace: the version a recomputation was based on."""
    counts: dict[str, int] = {}
    for chunk in _chunks(trace_ids):
        rows = conn.execute(
            select(traces.c.trace_id, func.count())
            .select_from(trace_spans)
            .where(traces.c.owner == owner, traces.c.trace_id.in_(chunk))
            .group_by(traces.c.trace_id)
        )
        counts.update({trace_id: int(count) for trace_id, count in rows})
    return counts


def due_traces(conn: Connection, now: float, limit: int = 5000) -> set[tuple[str, str]]:
    """Traces with a run whose timer (orphan grace, run timeout) has come due."""
    rows = conn.execute(
        select(runs.c.owner, runs.c.trace_id)
        .where(runs.c.check_at.is_not(None), runs.c.check_at <= now)
        .limit(limit)
    )
    return {(r.owner, r.trace_id) for r in rows}


def stale_pending(
    conn: Connection, marked_before: float, limit: int = 5000
) -> set[tuple[str, str]]:
    """Pending traces (spans stored, runs not recomputed) marked before a time:
    left by a process that stopped before recomputing them."""
    rows = conn.execute(
        select(traces.c.owner, traces.c.trace_id)
        .select_from(pending_traces.join(traces, traces.c.id == pending_traces.c.trace_ref))
        .where(pending_traces.c.marked_at < marked_before)
        .limit(limit)
    )
    return {(r.owner, r.trace_id) for r in rows}


def clear_pending(conn: Connection, owner: str, trace_ids: Sequence[str]) -> None:
    """These traces' runs are stored as of their spans now: unmark them."""
    for chunk in _chunks(trace_ids):
        numbers = select(traces.c.id).where(traces.c.owner == owner, traces.c.trace_id.in_(chunk))
        conn.execute(delete(pending_traces).where(pending_traces.c.trace_ref.in_(numbers)))


def delete_old_spans(conn: Connection, older_than: float) -> int:
    """Span retention; trace rows no span refers to any more go with them, and
    so do resources no span can use and marks of traces that are gone."""
    result = conn.execute(delete(spans).where(spans.c.received_at < older_than))
    delete_unused_traces(conn, older_than)
    delete_unused_resources(conn, older_than)
    conn.execute(
        delete(pending_traces).where(
            ~select(traces.c.id).where(traces.c.id == pending_traces.c.trace_ref).exists()
        )
    )
    return int(result.rowcount)


def group_by_owner(keys: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for owner, trace_id in sorted(keys):
        grouped[owner].append(trace_id)
    return grouped
