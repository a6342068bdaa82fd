"""Grades in SQL (docs/loop.md "Graded outcomes"): stored, applied to runs, read.

A grade is stored under every run id its (owner, agent, run key) can name
(`assembly.membership.keyed_run_ids`), so both sides meet on the run id:
- a grade updates its run if the run is stored (`save_grades`);
- every writer of runs applies the grades of the runs it has just stored
  (`apply_grades`), so a grade that came first, a recomputation (late span,
  timer, restart) and a grade that came last all end with the graded outcome.
On PostgreSQL `dialect.hold_runs` closes the one gap, a grade and a new run
committed at the same instant by two processes.

A grade whose run is not stored *waits*, and nothing else bounds it: each
waiting row counts its text plus `ROW_BYTES` (`waiting_bytes`) against its
owner (`grade_usage`, kept in the same transaction), a grade that would take
its owner past the quota is refused, and waiting rows past the wait age are
deleted by the retention pass (`storage.grade_waits`). A grade that meets a
run stops waiting, for its other name too (a key that is also a trace id):
grades of stored runs are never refused and are bounded by the runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from collector.assembly.identity import agent_id
from collector.assembly.membership import keyed_run_ids
from collector.storage.grade_waits import (
    add_usage,
    delete_grades,
    lock_usage,
    stop_waiting,
    waiting_rows,
)
from collector.storage.rows import GRADE_COLUMNS, GradeRow
from collector.storage.session import SqlSession, in_chunks
from collector.storage.tables import grades

GRADED = "graded"
# A row's own cost beyond its text (ids, numbers, index entries), so that
# empty grades count too.
ROW_BYTES = 256


@dataclass(frozen=True, slots=True)
class OverQuota:
    """A grade refused, nothing written: its owner's waiting grades would pass the quota."""

    waiting_bytes: int  # the owner's, before this grade
    grade_bytes: int  # what this grade would add
    quota_bytes: int


def waiting_size(row: GradeRow) -> int:
    """What a row counts while its run is not stored: its text as UTF-8 plus `ROW_BYTES`."""
    texts = (row.agent, row.run_key, row.expected_output, row.output, row.error_class)
    return ROW_BYTES + sum(len(text.encode()) for text in texts if text)


def save_grades(
    session: SqlSession, rows: Sequence[GradeRow], quota_bytes: int | None = None
) -> set[str] | OverQuota:
    """Store one grade, the rows of the run ids it names (the last write
    wins), and give its stored runs the outcome. Returns the ids of the runs
    graded now, or `OverQuota` if it would wait and take its owner past
    `quota_bytes` (None: no quota)."""
    if not rows:
        return set()
    run_ids = sorted({row.run_id for row in rows})
    session.hold_runs(run_ids)
    last = {row.run_id: row for row in rows}  # one statement may not write a key twice
    usage = lock_usage(session, sorted({row.owner for row in rows}))
    stored = session.run_seqs(run_ids)
    waiting = waiting_rows(session, run_ids)  # what the rows it replaces counted
    if stored:  # met: it waits for no other name
        kept = [last[i]._replace(waiting_bytes=0) for i in run_ids if i in stored]
    else:
        kept = [last[i]._replace(waiting_bytes=waiting_size(last[i])) for i in run_ids]
    added: Counter[str] = Counter()
    for row in kept:
        added[row.owner] += row.waiting_bytes
    for owner, size in waiting.values():
        added[owner] -= size
    if quota_bytes is not None and not stored:
        for owner, more in sorted(added.items()):
            if more > 0 and usage[owner] + more > quota_bytes:
                return OverQuota(usage[owner], more, quota_bytes)
    session.upsert_rows(grades, GRADE_COLUMNS, kept, key=("run_id",))
    kept_ids = {row.run_id for row in kept}
    delete_grades(session, [i for i in waiting if i not in kept_ids])
    add_usage(session, added)
    _grade_runs(session, {row.run_id: row.success for row in kept}, stored)
    return set(stored)


def apply_grades(session: SqlSession, run_ids: Sequence[str]) -> set[str]:
    """The graded outcome for every stored run among these that has a grade.

    Every writer of runs calls it after storing them, in the same transaction.
    A grade that was waiting for one of them stops waiting (its bytes leave
    the quota, its other name's row goes). Returns the ids of the runs it
    changed or confirmed.
    """
    found: dict[str, tuple[bool, int]] = {}
    columns = ("run_id", "success", "waiting_bytes")
    for chunk in in_chunks(list(run_ids)):
        for run_id, success, size in session.select_in(grades, columns, {}, "run_id", chunk):
            found[run_id] = (bool(success), int(size))
    if not found:
        return set()
    ordered = sorted(found)  # rows locked in id order, as every run writer does
    stored = session.run_seqs(ordered)
    _grade_runs(session, {run_id: success for run_id, (success, _) in found.items()}, stored)
    met = [run_id for run_id in ordered if run_id in stored and found[run_id][1] > 0]
    if met:
        stop_waiting(session, met, _other_names(session, met))
    return set(stored)


def grade_of(session: SqlSession, run_id: str) -> GradeRow | None:
    """The grade posted for one run, if any (the run detail)."""
    row = session.execute(select(grades).where(grades.c.run_id == run_id)).first()
    return GradeRow._make(row) if row is not None else None


def _other_names(session: SqlSession, run_ids: Sequence[str]) -> list[str]:
    """The run ids the grades of these runs also name, besides these."""
    names: set[str] = set()
    columns = ("owner", "agent", "run_key")
    for chunk in in_chunks(list(run_ids)):
        for owner, agent, run_key in session.select_in(grades, columns, {}, "run_id", chunk):
            names.update(keyed_run_ids(agent_id(owner, agent), run_key))
    return sorted(names - set(run_ids))


def _grade_runs(
    session: SqlSession, outcomes: Mapping[str, bool], stored: Mapping[str, int]
) -> None:
    """Stored runs take their grade's outcome."""
    ordered = [run_id for run_id in sorted(outcomes) if run_id in stored]
    if ordered:
        mark = session.mark
        session.cursor().executemany(
            f"UPDATE runs SET success = {mark}, success_source = '{GRADED}' WHERE seq = {mark}",
            [(outcomes[run_id], stored[run_id]) for run_id in ordered],
        )
