"""PostgreSQL's session: several processes write at once.

Every transaction that writes a trace's spans or runs first row-locks that
trace's `traces` row (an upsert, all of a transaction's traces in one
statement, sorted, so two transactions never wait on each other in a cycle).
Per-trace work is then serialised exactly as SQLite's single writer
serialises it: a run computed from N spans is checked against the stored
count and written with no insert of that trace in between, and "no span of
this trace is stored yet" (the single-request fast path) stays true until
the commit. Row locks rather than advisory locks: a 20,000-span batch can
touch thousands of traces, and advisory locks live in the bounded shared
lock table while row locks live in the rows. Other row waits (agents, runs)
happen in sorted order too; span retention skips trace rows in use. The one
cycle left open needs one `badge.run.id` reused across two traces written by
two processes at the same instant; PostgreSQL then aborts one transaction,
whose exports get a retryable 503: nothing is lost. A grade and a new run it
names wait for each other through `hold_runs`, and so do two runs of one run
key in two traces (storage.run_claims).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final

from sqlalchemy import Table

from collector.storage.postgresql import locks
from collector.storage.postgresql.copy import COPY_MIN_ROWS, copied_then, insert_copied, staging
from collector.storage.postgresql.numbers import (
    GRADER_SPANS_PER_NUMBER,
    SPANS_PER_NUMBER,
    rows_by_number,
)
from collector.storage.rows import RUN_KINDS
from collector.storage.session import (
    FOLD_BATCH,
    SqlSession,
    fold_statements,
    in_chunks,
    upsert_conflict,
)
from collector.storage.span_identity import grader_wins
from collector.storage.tables import runs
from collector.types import TraceKey

Rows = Sequence[tuple[Any, ...]]

# hold_runs' placeholder: a value of its kind (storage.rows.RUN_KINDS) for
# every run column that is NOT NULL, so a column added to the run record is
# filled here too (hand-typed, a new NOT NULL column broke only PostgreSQL).
# Status 'held' is what migration 0009's triggers leave out of the sums.
_PLACEHOLDERS = {
    "uuid": "''",
    "owner": "''",
    "trace_id": "''",
    "span_id": "''",
    "word": "''",
    "text": "''",
    "bool": "false",
    "int": "0",
    "int64": "0",
    "float": "0",
}
_HELD = {"id": "id", "status": "'held'", "tool_calls": "'[]'"}


def held_row(
    table: Table = runs, kinds: Mapping[str, str] = RUN_KINDS
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The columns hold_runs inserts and the SQL value of each: every NOT
    NULL column of `runs` the database does not fill itself."""
    needed = [
        column.name
        for column in table.columns
        if not column.nullable
        and column.server_default is None
        and column.autoincrement is not True
    ]
    values = tuple(_HELD.get(name) or _PLACEHOLDERS[kinds[name]] for name in needed)
    return tuple(needed), values


HELD_ROW: Final = held_row()


class PostgresSession(SqlSession):
    mark: ClassVar[str] = "%s"
    for_update: ClassVar[str] = " FOR UPDATE"
    # Retention never waits on a row a writer holds right now (that writer may
    # be waiting for this transaction: a duplicate of a span being deleted),
    # and a row a writer touched since is kept (its condition is re-checked
    # on the newest row version).
    skip_locked: ClassVar[str] = " FOR UPDATE SKIP LOCKED"

    # -- rows of any table: COPY from COPY_MIN_ROWS rows on ----------------

    def insert_ignore_rows(self, table: Table, columns: Sequence[str], rows: Rows) -> None:
        if len(rows) >= COPY_MIN_ROWS:
            insert_copied(self.cursor(), table, columns, rows, "ON CONFLICT DO NOTHING")
        else:
            super().insert_ignore_rows(table, columns, rows)

    def upsert_rows(
        self, table: Table, columns: Sequence[str], rows: Rows, key: Sequence[str]
    ) -> None:
        if len(rows) < COPY_MIN_ROWS:
            super().upsert_rows(table, columns, rows, key)
            return
        # One statement may not update a row twice: the last row per key wins,
        # as it would in a sequence of upserts.
        where = [columns.index(name) for name in key]
        last = {tuple(row[i] for i in where): row for row in rows}
        insert_copied(
            self.cursor(), table, columns, list(last.values()), upsert_conflict(columns, key)
        )

    # -- numbers -------------------------------------------------------------

    def trace_numbers(self, keys: Iterable[TraceKey]) -> dict[TraceKey, int]:
        by_owner: dict[str, list[str]] = {}
        for owner, trace_id in sorted(set(keys)):
            by_owner.setdefault(owner, []).append(trace_id)
        found: dict[TraceKey, int] = {}
        cur = self.cursor()
        for owner, trace_ids in by_owner.items():
            for chunk in in_chunks(trace_ids):
                cur.execute(
                    "SELECT trace_id, id FROM traces WHERE owner = %s AND trace_id = ANY(%s)",
                    (owner, chunk),
                )
                found.update(((owner, trace_id), int(n)) for trace_id, n in cur.fetchall())
        return found

    def run_seqs(self, run_ids: Iterable[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        cur = self.cursor()
        for chunk in in_chunks(sorted(set(run_ids))):
            cur.execute("SELECT id, seq FROM runs WHERE id = ANY(%s)", (chunk,))
            found.update((run_id, int(seq)) for run_id, seq in cur.fetchall())
        return found

    def iter_numbered(
        self, table: str, key: str, columns: Sequence[str], numbers: Sequence[int]
    ) -> Iterator[tuple[Any, ...]]:
        """One index probe per number (storage/postgresql/numbers.py), never a scan."""
        cur = self.cursor()
        cur.execute(rows_by_number(table, key, columns), (list(numbers),))
        yield from cur

    def count_spans_by_number(self, numbers: Sequence[int]) -> dict[int, int]:
        cur = self.cursor()
        cur.execute(SPANS_PER_NUMBER, (list(numbers),))
        return {int(number): int(count) for number, count in cur.fetchall() if count}

    def count_grader_spans_by_number(self, numbers: Sequence[int]) -> dict[int, int]:
        cur = self.cursor()
        cur.execute(GRADER_SPANS_PER_NUMBER, (list(numbers),))
        return {int(number): int(count) for number, count in cur.fetchall() if count}

    # -- traces, spans and runs written ---------------------------------------

    def register_traces(self, traces: Iterable[TraceKey], now: float) -> None:
        """An upsert, so the transaction also holds those rows until it ends
        (sorted: no wait cycle)."""
        self._for_traces(
            traces,
            now,
            "INSERT INTO traces (owner, trace_id, touched_at) "
            "SELECT o, t, %s FROM unnest(%s::text[], %s::text[]) AS k(o, t) ORDER BY o, t "
            "ON CONFLICT (owner, trace_id) DO UPDATE SET touched_at = excluded.touched_at",
        )

    def mark_pending(self, traces: Iterable[TraceKey], now: float) -> None:
        """Those trace rows are locked: marks are written in their order."""
        self._for_traces(
            traces,
            now,
            "INSERT INTO pending_traces (trace_ref, marked_at) "
            "SELECT t.id, %s FROM traces t JOIN unnest(%s::text[], %s::text[]) AS k(o, tr) "
            "ON t.owner = k.o AND t.trace_id = k.tr ORDER BY t.id ON CONFLICT DO NOTHING",
        )

    def _for_traces(self, traces: Iterable[TraceKey], now: float, sql: str) -> None:
        """One statement over arrays (now, owners[], trace ids[]), sorted."""
        ordered = sorted(set(traces))
        if ordered:
            self.cursor().execute(sql, (now, [o for o, _ in ordered], [t for _, t in ordered]))

    def insert_spans(self, table: Table, columns: Sequence[str], rows: Rows) -> None:
        span_at, grader_at = columns.index("span_id"), columns.index("grader")
        owner_at, trace_at = columns.index("owner"), columns.index("trace_id")

        def first_per_span(found: Rows) -> list[tuple[Any, ...]]:
            # One statement sees its duplicates in no set order (and may not
            # update a row twice): the row a sequence of inserts would keep is
            # chosen here, the first, or the first a grader key sent.
            first: dict[tuple[Any, Any, Any], tuple[Any, ...]] = {}
            for row in found:
                key = (row[owner_at], row[trace_at], row[span_at])
                held = first.get(key)
                if held is None or (row[grader_at] and not held[grader_at]):
                    first[key] = row
            return list(first.values())

        self._insert_numbered(
            table, columns, rows, grader_wins(table, columns), "t.id, s.span_id", first_per_span
        )

    def upsert_runs(self, table: Table, columns: Sequence[str], rows: Rows) -> None:
        last = list({row[0]: row for row in rows}.values())
        updates = ", ".join(f"{c} = excluded.{c}" for c in (*columns, "trace_ref") if c != "id")
        conflict = f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE runs.sealed_at IS NULL"
        self._insert_numbered(table, columns, last, conflict, "s.id", list)

    def _insert_numbered(
        self,
        table: Table,
        columns: Sequence[str],
        rows: Rows,
        conflict: str,
        copy_order: str,
        distinct: Callable[[Rows], list[tuple[Any, ...]]],
    ) -> None:
        """Insert rows with `trace_ref`, their trace's number, looked up in
        `traces` by the rows' own owner and trace_id (spans and runs).
        `distinct` leaves one row per key for the one COPY statement."""
        if not rows:
            return
        names = ", ".join(columns)
        if len(rows) >= COPY_MIN_ROWS:
            picked = ", ".join(f"s.{c}" for c in columns)
            copied_then(
                self.cursor(),
                table,
                columns,
                distinct(rows),
                f"INSERT INTO {table.name} (trace_ref, {names}) SELECT t.id, {picked} "
                # LEFT: a trace never registered fails NOT NULL, loudly, not dropped.
                f"FROM {staging(table)} s LEFT JOIN traces t "
                f"ON t.owner = s.owner AND t.trace_id = s.trace_id "
                f"ORDER BY {copy_order} {conflict}",
            )
            return
        owner_at, trace_at = columns.index("owner"), columns.index("trace_id")
        ref = "(SELECT id FROM traces WHERE owner = %s AND trace_id = %s)"
        self.cursor().executemany(
            f"INSERT INTO {table.name} (trace_ref, {names}) "
            f"VALUES ({ref}, {self.marks(len(columns))}) {conflict}",
            [(row[owner_at], row[trace_at], *row) for row in rows],
        )

    def hold_runs(self, run_ids: Sequence[str]) -> None:
        """Why: a grade and a new run of it, committed at the same instant by
        two processes, would each miss the other (the run writer reads grades
        after storing its runs; the grade updates its run if stored). An
        INSERT that meets a key another transaction has just inserted waits
        for it, so a placeholder row per run id, inserted where none is stored
        and deleted at once, makes either side wait for the other: never
        visible to anyone, never committed."""
        if not run_ids:
            return
        cur = self.cursor()
        columns, values = HELD_ROW
        cur.execute(
            f"INSERT INTO runs ({', '.join(columns)}) SELECT {', '.join(values)} "
            "FROM unnest(%s::text[]) AS k(id) ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id",
            (sorted(set(run_ids)),),
        )
        held = [row[0] for row in cur.fetchall()]
        if held:
            cur.execute("DELETE FROM runs WHERE id = ANY(%s)", (held,))

    # -- kept totals -------------------------------------------------------

    def fold_run_deltas(self) -> int:
        """The rows summed are exactly the rows deleted (one statement, one
        snapshot), so a change committed meanwhile waits for the next fold."""
        marked, folded = fold_statements("LEAST", "GREATEST")
        cur = self.cursor()
        cur.execute(
            "WITH moved AS (DELETE FROM run_deltas WHERE id IN "
            "(SELECT id FROM run_deltas ORDER BY id LIMIT %s) RETURNING *), "
            f"marked AS ({marked.format(source='moved')}) "
            + folded.format(source="moved")
            + " RETURNING 1",
            (FOLD_BATCH,),
        )
        return len(cur.fetchall())

    # -- locks held across processes ---------------------------------------

    def lock_for_setup(self) -> None:
        locks.lock_for_setup(self.conn)

    def lock_certificates(self) -> None:
        locks.lock_certificates(self.conn)

    def try_sweeper_lock(self) -> bool:
        return locks.try_advisory_lock(self.conn, locks.SWEEPER_LOCK)

    def release_sweeper_lock(self) -> None:
        locks.advisory_unlock(self.conn, locks.SWEEPER_LOCK)
