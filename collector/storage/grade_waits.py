"""Grades waiting for their run: each owner's sum, and their age limit
(docs/loop.md "Graded outcomes", docs/operations.md "Retention").

`grade_usage` holds, per owner, the sum of `grades.waiting_bytes`; every
change to a row's waiting bytes changes it in the same transaction, so the
quota check reads one row, whatever the number of grades. On PostgreSQL
several processes write: the owner's usage row is locked (`lock_usage`)
before the waiting rows are read, so that no two transactions count the same
row's change twice or not at all. SQLite's write lock already does that.

Whether a run is stored is asked through the session's `run_seqs`, never by a join
on runs.id (SQLite's id index holds merged runs only).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from collector.storage.session import SqlSession, in_chunks
from collector.storage.tables import grades

# Rows per step of the aging pass: each step is one job among the exports'
# group commits (as span retention's steps are), and reads only the oldest
# waiting rows through ix_grades_waiting.
AGING_STEP = 2_000
# Through ix_grades_waiting, in its order: no sort, no row that met its run.
OLDEST_WAITING = (
    "SELECT run_id, owner FROM grades WHERE waiting_bytes > 0 AND graded_at < {mark} "
    "ORDER BY graded_at LIMIT {mark}"
)


def lock_usage(session: SqlSession, owners: Sequence[str]) -> dict[str, int]:
    """Each owner's waiting bytes, its usage row created if missing and, on
    PostgreSQL, locked until the transaction ends (owners in order)."""
    wanted = sorted(set(owners))
    found = _usage(session, wanted)
    missing = [owner for owner in wanted if owner not in found]
    if missing:
        session.cursor().executemany(
            f"INSERT INTO grade_usage (owner, waiting_bytes) VALUES ({session.mark}, 0) "
            "ON CONFLICT (owner) DO NOTHING",
            [(owner,) for owner in missing],
        )
        found.update(_usage(session, missing))
    return found


def add_usage(session: SqlSession, added: Mapping[str, int]) -> None:
    """Add (or, negative, take) bytes to owners' sums; call `lock_usage` first."""
    mark = session.mark
    changes = [(more, owner) for owner, more in sorted(added.items()) if more]
    if changes:
        session.cursor().executemany(
            f"UPDATE grade_usage SET waiting_bytes = waiting_bytes + {mark} WHERE owner = {mark}",
            changes,
        )


def waiting_rows(session: SqlSession, run_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
    """run id -> (owner, waiting bytes) of the rows among these that wait."""
    found: dict[str, tuple[str, int]] = {}
    columns = ("run_id", "owner", "waiting_bytes")
    for chunk in in_chunks(sorted(set(run_ids))):
        for run_id, owner, size in session.select_in(grades, columns, {}, "run_id", chunk):
            if size > 0:
                found[run_id] = (owner, int(size))
    return found


def delete_grades(session: SqlSession, run_ids: Sequence[str]) -> None:
    mark = session.mark
    for chunk in in_chunks(sorted(run_ids)):
        session.cursor().execute(
            f"DELETE FROM grades WHERE run_id IN ({', '.join([mark] * len(chunk))})", tuple(chunk)
        )


def stop_waiting(session: SqlSession, met: Sequence[str], others: Sequence[str]) -> None:
    """The grades of these runs met them: their bytes leave the quota, and
    the rows of their other names that still wait are deleted."""
    owners = waiting_rows(session, [*met, *others])
    lock_usage(session, sorted({owner for owner, _ in owners.values()}))
    waiting = waiting_rows(session, owners)  # again, now that no other process changes them
    released = [run_id for run_id in met if run_id in waiting]
    _release(session, released, [run_id for run_id in others if run_id in waiting], waiting)


def age_out_grades(session: SqlSession, older_than: float, limit: int = AGING_STEP) -> int:
    """One step of the aging pass: up to `limit` of the oldest rows that have
    waited since before `older_than` are deleted (a row whose run is stored
    after all keeps its grade and stops waiting). Returns the rows it looked
    at: 0 means the pass is over."""
    cur = session.cursor()
    cur.execute(OLDEST_WAITING.format(mark=session.mark), (older_than, limit))
    candidates: list[tuple[str, str]] = cur.fetchall()
    if not candidates:
        return 0
    lock_usage(session, sorted({owner for _, owner in candidates}))
    # Read again under the lock: on PostgreSQL a row may have been posted again meanwhile.
    columns = ("run_id", "owner", "waiting_bytes", "graded_at")
    old: dict[str, tuple[str, int]] = {}
    for chunk in in_chunks(sorted(run_id for run_id, _ in candidates)):
        for run_id, owner, size, graded_at in session.select_in(
            grades, columns, {}, "run_id", chunk
        ):
            if size > 0 and graded_at < older_than:
                old[run_id] = (owner, int(size))
    stored = session.run_seqs(sorted(old))
    _release(session, sorted(stored), [run_id for run_id in old if run_id not in stored], old)
    return len(candidates)


def _release(
    session: SqlSession,
    stop: Sequence[str],
    delete: Sequence[str],
    waiting: Mapping[str, tuple[str, int]],
) -> None:
    """Rows that stop waiting (kept) and rows deleted; their owners' sums lose their bytes."""
    mark = session.mark
    if stop:
        session.cursor().executemany(
            f"UPDATE grades SET waiting_bytes = 0 WHERE run_id = {mark}",
            [(run_id,) for run_id in sorted(stop)],
        )
    delete_grades(session, delete)
    taken: Counter[str] = Counter()
    for run_id in [*stop, *delete]:
        owner, size = waiting[run_id]
        taken[owner] -= size
    add_usage(session, taken)


def _usage(session: SqlSession, owners: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    mark = session.mark
    cur = session.cursor()
    for chunk in in_chunks(list(owners)):
        cur.execute(
            f"SELECT owner, waiting_bytes FROM grade_usage WHERE owner IN "
            f"({', '.join([mark] * len(chunk))}) ORDER BY owner{session.for_update}",
            tuple(chunk),
        )
        found.update((owner, int(size)) for owner, size in cur.fetchall())
    return found
