"""A run as its `runs` row, and the `terminal_at` rule: written once, used by
the decoder processes (runs assembled from one request) and by recomputation.
Light on purpose: a decoder imports it without the database stack."""

from __future__ import annotations

import json

from collector.assembly.runs import Run
from collector.storage.rows import RUN_COLUMNS, RunRow, run_row_of

TERMINAL = frozenset({"completed", "failed", "timeout"})
# Tool calls kept on a run's row for its detail and page: the first ones in
# order. A run of 300,000 steps wrote 37 MB of JSON on every recomputation and
# answered its detail in 3.7 s (issue 29); `steps` stays exact, and every
# step is in the owner's trace view.
MAX_STORED_TOOL_CALLS = 1_000

# The `facts` column: compact JSON, written at ingest, read by to_span_facts.
# A bound encoder: json.dumps(..., separators=...) builds a new one per call.
encode_facts = json.JSONEncoder(separators=(",", ":")).encode


def terminal_at(run: Run, before: float | None, now: float) -> float | None:
    """The collector clock when a run first became terminal (docs/runs.md
    "Delivery"): kept through recomputation, None while it is running."""
    if run.status not in TERMINAL:
        return None
    return now if before is None else before


# The run record's fields the run's own fields do not give as they are: set
# here, or converted (tool calls and the evaluation as JSON).
_SET_HERE = frozenset({"owner", "terminal_at", "tool_calls", "updated_at", "evaluation"})


def run_row(owner: str, run: Run, terminal: float | None, now: float) -> RunRow:
    """A run as its `runs` row: every field of the run record copied by name
    from the run, but what only storing it knows (built once per run at
    ingest; tests/collector/test_run_rows.py checks every value's column)."""
    tool_calls = [
        {
            "name": t.name,
            "span_id": t.span_id,
            "start_ns": t.start_ns,
            "end_ns": t.end_ns,
            "status_code": t.status_code,
        }
        for t in run.tool_calls[:MAX_STORED_TOOL_CALLS]
    ]
    here = {
        "owner": owner,
        "terminal_at": terminal,
        "tool_calls": json.dumps(tool_calls),
        "updated_at": now,
        "evaluation": _evaluation(run),
    }
    return run_row_of(
        tuple(here[name] if name in _SET_HERE else getattr(run, name) for name in RUN_COLUMNS)
    )


def _evaluation(run: Run) -> str | None:
    found = run.evaluation
    if found is None:
        return None
    return encode_facts({"score": found.score, "output": found.output, "at": found.at})
