"""Load span facts of touched traces, and replace those traces' runs."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Run
from collector.storage.dialect import upsert
from collector.storage.tables import runs, spans

TERMINAL = frozenset({"completed", "failed", "timeout"})
_CHUNK = 400  # ids per IN (...) list, under every dialect's bind limit

_FACT_COLUMNS = (
    spans.c.trace_id,
    spans.c.span_id,
    spans.c.parent_span_id,
    spans.c.agent_id,
    spans.c.name,
    spans.c.start_ns,
    spans.c.end_ns,
    spans.c.status_code,
    spans.c.flags,
    spans.c.received_at,
    spans.c.grader,
    spans.c.role,
    spans.c.rule,
    spans.c.facts,
)


def load_trace_facts(
    conn: Connection, owner: str, trace_ids: Sequence[str]
) -> dict[str, list[SpanFacts]]:
    found: dict[str, list[SpanFacts]] = defaultdict(list)
    for start in range(0, len(trace_ids), _CHUNK):
        chunk = list(trace_ids[start : start + _CHUNK])
        rows = conn.execute(
            select(*_FACT_COLUMNS).where(spans.c.owner == owner, spans.c.trace_id.in_(chunk))
        )
        for r in rows:
            found[r.trace_id].append(
                SpanFacts(
                    span_id=r.span_id,
                    parent_span_id=r.parent_span_id,
                    agent_id=r.agent_id,
                    name=r.name,
                    start_ns=r.start_ns,
                    end_ns=r.end_ns,
                    status_code=r.status_code,
                    flags=r.flags,
                    received_at=r.received_at,
                    grader=bool(r.grader),
                    role=r.role,
                    rule=r.rule,
                    facts=json.loads(r.facts),
                )
            )
    return found


def replace_trace_runs(
    conn: Connection, owner: str, assembled: dict[str, list[Run]], now: float
) -> list[Run]:
    """Write the new runs of these traces; drop runs the traces no longer hold.

    `terminal_at` is the collector clock when a run first became terminal
    (RUNS.md "Delivery"); it survives recomputation. Returns newly terminal runs.
    """
    trace_ids = list(assembled)
    existing: dict[str, tuple[str, str, float | None]] = {}
    for start in range(0, len(trace_ids), _CHUNK):
        chunk = trace_ids[start : start + _CHUNK]
        for r in conn.execute(
            select(runs.c.id, runs.c.trace_id, runs.c.status, runs.c.terminal_at).where(
                runs.c.owner == owner, runs.c.trace_id.in_(chunk)
            )
        ):
            existing[r.id] = (r.trace_id, r.status, r.terminal_at)
    keep = {run.id for group in assembled.values() for run in group}
    stale = [run_id for run_id in existing if run_id not in keep]
    for start in range(0, len(stale), _CHUNK):
        conn.execute(delete(runs).where(runs.c.id.in_(stale[start : start + _CHUNK])))
    rows: list[dict[str, Any]] = []
    finalised: list[Run] = []
    for group in assembled.values():
        for run in group:
            before = existing.get(run.id)
            terminal_at = before[2] if before else None
            if run.status in TERMINAL and terminal_at is None:
                terminal_at = now
                finalised.append(run)
            elif run.status not in TERMINAL:
                terminal_at = None
            rows.append(_row(owner, run, terminal_at, now))
    upsert(conn, runs, rows, key=("id",))
    return finalised


def _row(owner: str, run: Run, terminal_at: float | None, now: float) -> dict[str, Any]:
    return {
        "id": run.id,
        "owner": owner,
        "agent_id": run.agent_id,
        "trace_id": run.trace_id,
        "run_key": run.run_key,
        "root_span_id": run.root_span_id,
        "task_id": run.task_id,
        "status": run.status,
        "success": run.success,
        "success_source": run.success_source,
        "started_ns": run.start_ns,
        "ended_ns": run.end_ns,
        "latency_ms": run.latency_ms,
        "steps": run.steps,
        "tool_errors": run.tool_errors,
        "llm_calls": run.llm_calls,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost_usd": run.cost_usd,
        "cost_source": run.cost_source,
        "error_class": run.error_class,
        "span_count": run.span_count,
        "has_agent_span": run.has_agent_span,
        "last_received_at": run.last_received_at,
        "check_at": run.check_at,
        "terminal_at": terminal_at,
        "tool_calls": json.dumps(
            [
                {
                    "name": t.name,
                    "span_id": t.span_id,
                    "start_ns": t.start_ns,
                    "end_ns": t.end_ns,
                    "status_code": t.status_code,
                }
                for t in run.tool_calls
            ]
        ),
        "updated_at": now,
    }


def due_traces(conn: Connection, now: float, limit: int = 5000) -> set[tuple[str, str]]:
    """Traces with a run whose timer (orphan grace, run timeout) has come due."""
    rows = conn.execute(
        select(runs.c.owner, runs.c.trace_id)
        .where(runs.c.check_at.is_not(None), runs.c.check_at <= now)
        .limit(limit)
    )
    return {(r.owner, r.trace_id) for r in rows}


def delete_old_spans(conn: Connection, older_than: float) -> int:
    result = conn.execute(delete(spans).where(spans.c.received_at < older_than))
    return int(result.rowcount)


def group_by_owner(keys: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for owner, trace_id in sorted(keys):
        grouped[owner].append(trace_id)
    return grouped


def now_s() -> float:
    return time.time()
