"""A run as its `runs` row, and the `terminal_at` rule: written once, used by
the decoder processes (runs assembled from one request) and by recomputation.
Light on purpose: a decoder imports it without the database stack."""

from __future__ import annotations

import json

from collector.assembly.runs import Run
from collector.storage.rows import RunRow, run_row_of

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


def run_row(owner: str, run: Run, terminal: float | None, now: float) -> RunRow:
    """A run as its `runs` row (built once per run at ingest);
    tests/collector/test_run_rows.py checks every value's column."""
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
    return run_row_of(
        (
            run.id,
            owner,
            run.agent_id,
            run.trace_id,
            run.run_key,
            run.root_span_id,
            run.task_id,
            run.version,
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
            terminal,
            json.dumps(tool_calls),
            now,
            _evaluation(run),
            *(run.screening or _NO_SCREENING),
        )
    )


_NO_SCREENING = (None, None, None, None)


def _evaluation(run: Run) -> str | None:
    found = run.evaluation
    if found is None:
        return None
    return encode_facts({"score": found.score, "output": found.output, "at": found.at})
