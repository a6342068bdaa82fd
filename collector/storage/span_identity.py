"""Two spans of one identity: which one a span table keeps (docs/runs.md
"Runs a grader recorded", "Delivery in any order").

A span is identified by its owner, trace id and span id, whichever key sent
it. An agent under test is handed its screened run's root span id in
`traceparent` and holds a key of the same owner, so "the first one stays"
let it replace the screener's root by sending first (issue 37 item 2).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table


def grader_wins(table: Table, columns: Sequence[str]) -> str:
    """ON CONFLICT of a span row: what a grader key sent is never replaced, and
    replaces what any other key sent under the same identity (docs/runs.md
    "Runs a grader recorded"). Either arrival order stores the grader's span,
    so the run is the same for both; between two spans of the same kind of
    key the first stays (an exporter's retry)."""
    kept = ("owner", "trace_id", "span_id")
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in kept)
    return (
        f"ON CONFLICT (trace_ref, span_id) DO UPDATE SET {updates} "
        f"WHERE excluded.grader AND NOT {table.name}.grader"
    )
