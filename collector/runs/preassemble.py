"""Runs assembled in a decoder process from one request's spans alone.

Valid only while the database holds no span of their trace (runs.fresh
decides, in the spans' transaction). Imported by the decoders: light on
purpose, no database stack.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Timers, assemble_trace
from collector.runs.run_rows import run_row, terminal_at
from collector.storage.rows import RunRow, SpanRow, row_builder

FreshRuns = dict[str, list[RunRow]]  # trace id -> runs assembled from one request

# What run assembly reads of a stored span: its row's fields, by name, and its facts.
span_facts_of: Callable[[SpanRow, Mapping[str, Any]], SpanFacts] = row_builder(
    SpanFacts,
    "row, facts",
    {
        **{name: f"row.{name}" for name in SpanFacts._fields if name != "facts"},
        "facts": "facts",
    },
)


def preassemble(
    rows: Sequence[SpanRow],
    facts: Sequence[Mapping[str, Any]],
    now: float,
    timers: Timers,
    conventions_digest: str,
) -> FreshRuns:
    """Each trace's runs from this request's span rows alone (decoder side);
    `facts[i]` are the facts of `rows[i]`. A span sent twice in the request
    counts once, as its first copy (the table keeps one)."""
    if not rows:
        return {}
    by_trace: dict[str, dict[str, SpanFacts]] = {}
    for row, read in zip(rows, facts, strict=True):
        members = by_trace.get(row.trace_id)
        if members is None:
            members = by_trace[row.trace_id] = {}
        if row.span_id not in members:
            members[row.span_id] = span_facts_of(row, read)
    owner = rows[0].owner
    fresh: FreshRuns = {}
    for trace_id, members in by_trace.items():
        runs = assemble_trace(
            trace_id,
            list(members.values()),
            now,
            timers,
            keep_verdicts=False,
            conventions_digest=conventions_digest,
        )
        fresh[trace_id] = [run_row(owner, run, terminal_at(run, None, now), now) for run in runs]
    return fresh
