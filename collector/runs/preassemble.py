"""Runs assembled in a decoder process from one request's spans alone.

Valid only while the database holds no span of their trace (runs.fresh
decides, in the spans' transaction). Imported by the decoders: light on
purpose, no database stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from collector.assembly.facts import SpanFacts
from collector.assembly.runs import Timers, assemble_trace
from collector.runs.run_rows import run_row, terminal_at
from collector.storage.rows import RunRow

FreshRuns = dict[str, list[RunRow]]  # trace id -> runs assembled from one request


def preassemble(
    owner: str,
    by_trace: Mapping[str, Iterable[SpanFacts]],
    now: float,
    timers: Timers,
    conventions_digest: str,
) -> FreshRuns:
    """Each trace's runs from this request's spans alone (decoder side)."""
    fresh: FreshRuns = {}
    for trace_id, members in by_trace.items():
        runs = assemble_trace(
            trace_id,
            list(members),
            now,
            timers,
            keep_verdicts=False,
            conventions_digest=conventions_digest,
        )
        fresh[trace_id] = [run_row(owner, run, terminal_at(run, None, now), now) for run in runs]
    return fresh
