"""The store's coverage read on both databases (CONVENTIONS.md section 6):
the newest 1,000 runs only, runs stored before conventions in neither
sum, a run's root never unrecognised, and the detail only when asked for."""

from __future__ import annotations

import time

from sqlalchemy import text

from bench.coverage import fill
from collector.assembly.runs import Timers
from collector.storage.engine import open_database
from collector.storage.reads import SqlReadStore

RUNS = 1_003  # three more than coverage reads


def test_coverage_reads_the_newest_thousand_runs_and_leaves_out_runs_before_conventions(
    database_url: str,
) -> None:
    # each run: its root, four spans genai recognises, one it does not (span 5)
    ident = fill(database_url, RUNS, 6)
    db = open_database(database_url)
    try:
        store = SqlReadStore(db, Timers(), time.time)
        totals = store.coverage(ident, detail=False)
        assert (totals.runs, totals.spans, totals.unrecognised) == (1000, 6000, 1000)
        assert totals.scopes == () and totals.unrecognised_names == ()
        found = store.coverage(ident)
        acme, *_ = found.scopes
        assert (acme.scope, acme.spans, acme.unrecognised) == ("acme.tracer", 1000, 1000)
        harness = next(s for s in found.scopes if s.scope == "harness")
        assert (harness.spans, harness.unrecognised) == (1000, 0)  # the roots
        (name,) = found.unrecognised_names
        assert (name.name, name.spans) == ("Step", 1000)
        assert name.example_run_id == "00000003-0000-0000-0000-000000000000"  # not the oldest
        with db.writer.begin() as conn:  # the newest ten as if stored before conventions
            conn.execute(
                text(
                    "UPDATE runs SET unrecognised_spans = NULL WHERE id >= "
                    "'00000993-0000-0000-0000-000000000000'"
                )
            )
        older = store.coverage(ident, detail=False)
        assert (older.runs, older.spans, older.unrecognised) == (1000, 5940, 990)
        assert store.coverage("00000000-0000-4000-8000-000000000000").runs == 0
    finally:
        db.dispose()
