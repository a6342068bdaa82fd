"""Grades in SQL (docs/loop.md "Graded outcomes"): stored, applied to runs, read.

A grade is stored under every run id its (owner, agent, run key) can name
(`assembly.membership.keyed_run_ids`), so both sides meet on the run id:
- a grade updates its run if the run is stored (`save_grades`);
- every writer of runs applies the grades of the runs it has just stored
  (`apply_grades`), so a grade that came first, a recomputation (late span,
  timer, restart) and a grade that came last all end with the graded outcome.
On PostgreSQL `dialect.hold_runs` closes the one gap, a grade and a new run
committed at the same instant by two processes.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.engine import Connection

from collector.storage.dialect import (
    cursor,
    hold_runs,
    in_chunks,
    marker,
    run_seqs,
    select_in,
    upsert_rows,
)
from collector.storage.rows import GRADE_COLUMNS, GradeRow
from collector.storage.tables import grades

GRADED = "graded"


def save_grades(conn: Connection, rows: Sequence[GradeRow]) -> set[str]:
    """Store grades (the last write wins) and give their stored runs the
    outcome. Returns the ids of the runs graded now."""
    if not rows:
        return set()
    run_ids = sorted({row.run_id for row in rows})
    hold_runs(conn, run_ids)
    last = {row.run_id: row for row in rows}  # one statement may not write a key twice
    upsert_rows(conn, grades, GRADE_COLUMNS, [last[i] for i in run_ids], key=("run_id",))
    return apply_grades(conn, run_ids)


def apply_grades(conn: Connection, run_ids: Sequence[str]) -> set[str]:
    """The graded outcome for every stored run among these that has a grade.

    Every writer of runs calls it after storing them, in the same transaction.
    Returns the ids of the runs it changed or confirmed.
    """
    outcomes: dict[str, bool] = {}
    for chunk in in_chunks(list(run_ids)):
        for run_id, success in select_in(conn, grades, ("run_id", "success"), {}, "run_id", chunk):
            outcomes[run_id] = bool(success)
    if not outcomes:
        return set()
    ordered = sorted(outcomes)  # rows locked in id order, as every run writer does
    stored = run_seqs(conn, ordered)
    if stored:
        mark = marker(conn)
        cursor(conn).executemany(
            f"UPDATE runs SET success = {mark}, success_source = '{GRADED}' WHERE seq = {mark}",
            [(outcomes[run_id], stored[run_id]) for run_id in ordered if run_id in stored],
        )
    return set(stored)


def grade_of(conn: Connection, run_id: str) -> GradeRow | None:
    """The grade posted for one run, if any (the run detail)."""
    row = conn.execute(select(grades).where(grades.c.run_id == run_id)).first()
    return GradeRow(*row) if row is not None else None
