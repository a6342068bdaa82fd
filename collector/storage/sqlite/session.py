"""SQLite's session: one writer at a time (BEGIN IMMEDIATE holds the
database), `?` placeholders, and the key tail.

The key tail (migration 0012, storage/sqlite/key_tail.py): new trace and run
rows are written outside their random-keyed indexes and merged in bulk by
the sweeper. A write session is handed the writer's memory of those rows
(`keys`) and keeps what it adds there; a session without it (a reader, a
caller's own connection) scans the unmerged rows instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Final

from sqlalchemy import Table, select
from sqlalchemy.engine import Connection

from collector.storage.session import (
    FOLD_BATCH,
    SqlSession,
    fold_statements,
    in_chunks,
)
from collector.storage.span_identity import grader_wins
from collector.storage.sqlite import lookups
from collector.storage.sqlite.key_tail import KeyTxn, RecentKeys
from collector.storage.tables import runs
from collector.types import TraceKey

# New runs per INSERT statement. The runs' triggers (migration 0009) make
# SQLite keep a statement journal: the first change to each page in a
# statement copies the page there. One row per statement copied ~10 pages
# of 16 KiB per run (4.9 GB of temp-file writes per 256k-span round, strace);
# 25 rows share most of their pages. 25 x 34 values stays under the oldest
# default bind limit (999).
RUNS_PER_INSERT: Final = 25


class SqliteSession(SqlSession):
    mark: ClassVar[str] = "?"

    def __init__(
        self, conn: Connection, keys: KeyTxn | None = None, recent: RecentKeys | None = None
    ) -> None:
        """`keys`: this write transaction's view of the key tail (None: scan
        it). `recent`: the process's memory, whose hints a reader checks."""
        super().__init__(conn)
        self.keys = keys
        self._recent = recent

    def trace_numbers(self, keys: Iterable[TraceKey]) -> dict[TraceKey, int]:
        return lookups.trace_numbers(self.cursor(), self.keys, keys)

    def run_seqs(self, run_ids: Iterable[str]) -> dict[str, int]:
        return lookups.run_seqs(self.cursor(), self.keys, run_ids)

    def run_seq(self, run_id: str) -> int | None:
        """The writer's memory of recent runs first (checked against the
        row: it may be out of date), else the index or a scan of the tail."""
        hint = self._recent.run_hint(run_id) if self._recent is not None else None
        if hint is not None:
            found = self.conn.execute(select(runs.c.id).where(runs.c.seq == hint)).scalar()
            if found == run_id:
                return hint
        return super().run_seq(run_id)

    def register_traces(self, traces: Iterable[TraceKey], now: float) -> None:
        """Inserted if new, outside the index (merged later), never
        rewritten: a rewrite would dirty a random page."""
        ordered = sorted(set(traces))
        known = self.trace_numbers(ordered)
        cur = self.cursor()
        for key in ordered:
            if key not in known:
                cur.execute(
                    "INSERT INTO traces (owner, trace_id, touched_at, merged) VALUES (?, ?, ?, 0)",
                    (*key, now),
                )
                if self.keys is not None:
                    self.keys.added_traces[key] = int(cur.lastrowid)

    def insert_spans(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Each row's trace number from the writer's memory or the index;
        one statement per row in order, so a duplicate meets the row before it
        as it would in a later request (`grader_wins`)."""
        if not rows:
            return
        owner_at, trace_at = columns.index("owner"), columns.index("trace_id")
        refs = self.trace_numbers([(row[owner_at], row[trace_at]) for row in rows])
        self.cursor().executemany(
            f"INSERT INTO {table.name} (trace_ref, {', '.join(columns)}) "
            f"VALUES (?, {self.marks(len(columns))}) {grader_wins(table, columns)}",
            [(refs.get((row[owner_at], row[trace_at])), *row) for row in rows],
        )

    def upsert_runs(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """The id index holds merged rows only, so there is no conflict to
        catch: stored runs are found first, updated by number; new ones are
        inserted unmerged, numbered, and remembered."""
        last = list({row[0]: row for row in rows}.values())
        if not last:
            return
        owner_at, trace_at = columns.index("owner"), columns.index("trace_id")
        refs = self.trace_numbers([(row[owner_at], row[trace_at]) for row in last])
        seqs = self.run_seqs([row[0] for row in last])
        cur = self.cursor()
        assigned = ", ".join(f"{c} = ?" for c in (*columns[1:], "trace_ref"))
        cur.executemany(
            f"UPDATE {table.name} SET {assigned} WHERE seq = ? AND sealed_at IS NULL",
            [
                (*row[1:], refs.get((row[owner_at], row[trace_at])), seqs[row[0]])
                for row in last
                if row[0] in seqs
            ],
        )
        added = [
            (refs.get((row[owner_at], row[trace_at])), *row) for row in last if row[0] not in seqs
        ]
        one = f"({', '.join(['?'] * (len(columns) + 1))}, 0)"
        for chunk in in_chunks(added, RUNS_PER_INSERT):
            cur.execute(
                f"INSERT INTO {table.name} (trace_ref, {', '.join(columns)}, merged) "
                f"VALUES {', '.join([one] * len(chunk))} RETURNING id, seq",
                [value for row in chunk for value in row],
            )
            numbered = cur.fetchall()
            if self.keys is not None:
                self.keys.added_runs.update((run_id, int(seq)) for run_id, seq in numbered)

    def delete_runs(self, run_ids: Iterable[str]) -> dict[str, int]:
        """Every writer reads its memory of unmerged rows again afterwards
        (a row it remembers may be gone)."""
        found = super().delete_runs(run_ids)
        if found:
            if self.keys is not None:
                self.keys.removed_runs.update(found)
                for run_id in found:
                    self.keys.added_runs.pop(run_id, None)
            lookups.next_key_generation(self.cursor(), self.keys)
        return found

    def mark_pending(self, traces: Iterable[TraceKey], now: float) -> None:
        numbers = sorted(self.trace_numbers(traces).values())
        self.cursor().executemany(
            "INSERT INTO pending_traces (trace_ref, marked_at) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING",
            [(number, now) for number in numbers],
        )

    def fold_run_deltas(self) -> int:
        """The write lock holds the table: the rows summed are the rows deleted."""
        marked, folded = fold_statements("min", "max")
        cur = self.cursor()
        cur.execute("SELECT id FROM run_deltas ORDER BY id LIMIT 1 OFFSET ?", (FOLD_BATCH - 1,))
        row = cur.fetchone()
        bound = "" if row is None else f" WHERE id <= {int(row[0])}"
        cur.execute(marked.format(source=f"(SELECT * FROM run_deltas{bound})"))
        cur.execute(folded.format(source=f"(SELECT * FROM run_deltas{bound})"))
        changed = int(cur.rowcount)
        cur.execute(f"DELETE FROM run_deltas{bound}")
        return changed

    def delete_unused_traces(self, older_than: float, limit: int) -> int:
        deleted = super().delete_unused_traces(older_than, limit)
        if deleted:  # some may be rows the writer remembers
            lookups.next_key_generation(self.cursor(), self.keys)
        return deleted

    def delete_resources_seen_before(self, cutoff: float) -> None:
        self.cursor().execute("DELETE FROM resources WHERE seen_at < ?", (cutoff,))

    def merge_key_tails(self, force: bool = False) -> int:
        return lookups.merge_key_tails(self.cursor(), self.keys, force)
