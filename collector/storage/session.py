"""One connection's SQL, as the database behind it speaks it.

Opening the database (`storage.engine.open_database`) chooses its backend
once, SQLite (`storage.sqlite`) or PostgreSQL (`storage.postgresql`); every
connection is then used through a session of that backend. A statement whose
SQL is the same for both lives here or in the subject modules above
(`writes`, `grades`, `weights`, ...); one that differs is a method the
backend's session overrides. No module outside the two backends asks which
database it is talking to.

The hot paths (span batches, run upserts, fact loads) go straight to the
DB-API cursor with tuples: SQLAlchemy's per-row parameter processing cost
more than the insert itself (measured in bench/ingest.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Final, Protocol, TypeVar

from sqlalchemy import Table, text
from sqlalchemy.engine import Connection, CursorResult, Engine
from sqlalchemy.sql import Executable

from collector.storage.tables import GRADER_SPANS
from collector.types import TraceKey

T = TypeVar("T")

# Ids per IN (...) list, under every dialect's bind-parameter limit.
IN_CHUNK: Final = 400

# Tables span retention deletes from (PostgreSQL vacuums them after a pass).
RETAINED_TABLES: Final = ("spans", "traces", "resources", "pending_traces")

# run_deltas -> run_totals (migration 0009): keys, sums, and how each sum folds.
TOTALS_KEY: Final = "agent_id, version_key, status, cost_source_key, success_key, task_key"
TOTALS_ADDED: Final = ("runs", "latency_sum", "latency_n", "cost_sum", "graded", "listed")
FOLD_BATCH: Final = 50_000


def in_chunks(items: Sequence[T], size: int = IN_CHUNK) -> Iterable[list[T]]:
    """Consecutive lists of at most `size` items (by default an IN (...)
    list's worth of ids)."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def exact(rows: Iterable[tuple[Any, ...]]) -> Iterable[tuple[Any, ...]]:
    """Named rows as plain tuples, for binding: sqlite3 binds an exact tuple
    on its fast path, a tuple subclass (a NamedTuple) through the sequence
    protocol: 6.5 against 5.2 us per 20-column span row (measured here)."""
    return map(tuple, rows)


def fold_statements(least: str, greatest: str) -> tuple[str, str]:
    """The two statements of a fold over a `{source}` of run_deltas rows:
    mark their agents' board rows stale (storage/board.py), and add their
    sums into run_totals. `least`/`greatest` are the database's two-value
    min and max."""
    updates = ", ".join(f"{c} = run_totals.{c} + excluded.{c}" for c in TOTALS_ADDED)
    # SQLite's two-argument min/max are NULL when either is; PostgreSQL's
    # LEAST/GREATEST skip NULLs: COALESCE gives both that reading.
    updates += (
        f", first_started = COALESCE({least}(run_totals.first_started, excluded.first_started), "
        "run_totals.first_started, excluded.first_started)"
        f", last_started = COALESCE({greatest}(run_totals.last_started, excluded.last_started), "
        "run_totals.last_started, excluded.last_started)"
    )
    sums = ", ".join(f"sum({c})" for c in TOTALS_ADDED)
    columns = f"{TOTALS_KEY}, {', '.join(TOTALS_ADDED)}, first_started, last_started"
    folded = (
        f"INSERT INTO run_totals ({columns}) SELECT {TOTALS_KEY}, {sums}, "
        "min(first_started), max(last_started) FROM {source} WHERE true "
        f"GROUP BY {TOTALS_KEY} ON CONFLICT ({TOTALS_KEY}) DO UPDATE SET {updates}"
    )
    marked = (
        "INSERT INTO board_stale (agent_id) SELECT DISTINCT agent_id FROM {source} "
        "WHERE true ON CONFLICT (agent_id) DO NOTHING"
    )
    return marked, folded


class SqlSession(ABC):
    """What both databases do alike, and the operations each does its own way.

    A session lives as long as its connection's use: a write transaction
    (`Database.writing`), a read (`Database.reading`), or a connection a
    caller holds (`Database.session`).
    """

    mark: ClassVar[str]  # the driver's placeholder for a bound value
    # Appended to a SELECT whose rows the transaction goes on to change, where
    # several processes may write (PostgreSQL); SQLite has one writer.
    for_update: ClassVar[str] = ""
    # The same, skipping rows another transaction holds (retention never waits).
    skip_locked: ClassVar[str] = ""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- plumbing ---------------------------------------------------------

    def execute(
        self, statement: Executable, parameters: Mapping[str, Any] | None = None
    ) -> CursorResult[Any]:
        """A SQLAlchemy statement, which is the same SQL for both databases."""
        return self.conn.execute(statement, parameters)

    def cursor(self) -> Any:
        """The DB-API cursor of this connection, inside its current transaction."""
        return self.conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]

    def marks(self, count: int) -> str:
        """`count` placeholders, comma-separated."""
        return ", ".join([self.mark] * count)

    # -- rows of any table ------------------------------------------------

    def insert_ignore_rows(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert tuples; a row whose unique key exists already is skipped."""
        self._insert_each(table, columns, rows, "ON CONFLICT DO NOTHING")

    def upsert_rows(
        self,
        table: Table,
        columns: Sequence[str],
        rows: Sequence[tuple[Any, ...]],
        key: Sequence[str],
    ) -> None:
        """Insert tuples, or overwrite every non-key column of the existing row."""
        self._insert_each(table, columns, rows, upsert_conflict(columns, key))

    def _insert_each(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]], conflict: str
    ) -> None:
        """One INSERT per row, through executemany, with this ON CONFLICT."""
        if rows:
            self.cursor().executemany(
                f"INSERT INTO {table.name} ({', '.join(columns)}) "
                f"VALUES ({self.marks(len(columns))}) {conflict}",
                exact(rows),
            )

    def select_in(
        self,
        table: Table,
        columns: Sequence[str],
        equal: dict[str, Any],
        in_column: str,
        values: Sequence[Any],
    ) -> list[tuple[Any, ...]]:
        """SELECT columns WHERE equal... AND in_column IN (values), as plain tuples."""
        where = [f"{name} = {self.mark}" for name in equal]
        where.append(f"{in_column} IN ({self.marks(len(values))})")
        cur = self.cursor()
        cur.execute(
            f"SELECT {', '.join(columns)} FROM {table.name} WHERE {' AND '.join(where)}",
            (*equal.values(), *values),
        )
        rows: list[tuple[Any, ...]] = cur.fetchall()
        return rows

    # -- trace and run numbers --------------------------------------------

    @abstractmethod
    def trace_numbers(self, keys: Iterable[TraceKey]) -> dict[TraceKey, int]:
        """The numbers (traces.id) of these (owner, trace id)s that have a row."""

    @abstractmethod
    def run_seqs(self, run_ids: Iterable[str]) -> dict[str, int]:
        """The row numbers (runs.seq) of these run ids that are stored."""

    def run_seq(self, run_id: str) -> int | None:
        """One run's row number (a read of one run)."""
        return self.run_seqs([run_id]).get(run_id)

    def iter_numbered(
        self, table: str, key: str, columns: Sequence[str], numbers: Sequence[int]
    ) -> Iterator[tuple[Any, ...]]:
        """Columns of the rows whose `key` is one of these numbers, one row at
        a time: a reader that turns each into something smaller (span facts)
        never holds them all as tuples too."""
        cur = self.cursor()
        for chunk in in_chunks(numbers):
            cur.execute(
                f"SELECT {', '.join(columns)} FROM {table} "
                f"WHERE {key} IN ({self.marks(len(chunk))})",
                tuple(chunk),
            )
            yield from cur

    def count_grader_spans_by_number(self, numbers: Sequence[int]) -> dict[int, int]:
        """How many spans from a grader key each of these trace numbers has
        (none: left out), through the partial index of those spans alone. A
        grader's span may take the place of another's without changing the
        trace's span count; this count changes then (storage.span_identity)."""
        cur = self.cursor()
        counts: dict[int, int] = {}
        for chunk in in_chunks(numbers):
            cur.execute(
                f"SELECT trace_ref, count(*) FROM spans WHERE {GRADER_SPANS} "
                f"AND trace_ref IN ({self.marks(len(chunk))}) GROUP BY trace_ref",
                tuple(chunk),
            )
            counts.update((int(number), int(count)) for number, count in cur.fetchall())
        return counts

    def count_spans_by_number(self, numbers: Sequence[int]) -> dict[int, int]:
        """How many spans each of these trace numbers has (none: left out)."""
        cur = self.cursor()
        counts: dict[int, int] = {}
        for chunk in in_chunks(numbers):
            cur.execute(
                "SELECT trace_ref, count(*) FROM spans "
                f"WHERE trace_ref IN ({self.marks(len(chunk))}) GROUP BY trace_ref",
                tuple(chunk),
            )
            counts.update((int(number), int(count)) for number, count in cur.fetchall())
        return counts

    def select_runs_by_id(
        self, columns: Sequence[str], run_ids: Iterable[str]
    ) -> list[tuple[Any, ...]]:
        """Run columns of the stored runs among these ids."""
        seqs = sorted(self.run_seqs(run_ids).values())
        return list(self.iter_numbered("runs", "seq", columns, seqs))

    def select_runs_of_traces(
        self, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """Run columns of these traces of one owner (through their numbers)."""
        return list(self._rows_of_traces("runs", columns, owner, trace_ids))

    def select_trace_spans(
        self, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
    ) -> Iterator[tuple[Any, ...]]:
        """Span columns of these traces of one owner, as plain tuples, one at a time."""
        return self._rows_of_traces("spans", columns, owner, trace_ids)

    def _rows_of_traces(
        self, table: str, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
    ) -> Iterator[tuple[Any, ...]]:
        """Rows of a table keyed by trace number, for (owner, trace id)s: the
        traces' numbers looked up, then their rows."""
        numbers = sorted(self.trace_numbers([(owner, t) for t in trace_ids]).values())
        return self.iter_numbered(table, "trace_ref", columns, numbers)

    # -- traces, spans and runs written -----------------------------------

    @abstractmethod
    def register_traces(self, traces: Iterable[TraceKey], now: float) -> None:
        """Give every (owner, trace id) of this transaction its `traces` row."""

    @abstractmethod
    def insert_spans(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert span rows, each keyed by its trace's number from `traces`
        (register_traces ran first). A duplicate is stored once: the row kept
        is the first, except that a span from a grader key takes the place of
        one from any other key (storage.span_identity)."""

    @abstractmethod
    def upsert_runs(
        self, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert or overwrite run rows (by id, which comes first), each with
        its trace's number from `traces` (registered earlier in the
        transaction); a sealed run is never rewritten. The last row per id
        wins, as it would in a sequence of upserts."""

    def delete_runs(self, run_ids: Iterable[str]) -> dict[str, int]:
        """Delete these runs (stored or not), sealed ones excepted (the caller
        leaves those out). Returns the ones that were stored, with their numbers."""
        found = self.run_seqs(run_ids)
        for chunk in in_chunks(sorted(found.values())):
            self.cursor().execute(
                f"DELETE FROM runs WHERE seq IN ({self.marks(len(chunk))})", tuple(chunk)
            )
        return found

    def hold_runs(self, run_ids: Sequence[str]) -> None:
        """Wait until no other transaction is storing one of these runs, and
        keep any other from storing one new until this one ends. One writer
        (SQLite's write lock) has nothing to wait for."""
        return None

    @abstractmethod
    def mark_pending(self, traces: Iterable[TraceKey], now: float) -> None:
        """Mark (owner, trace id)s whose runs must be recomputed
        (`pending_traces`), in the transaction that stores their spans,
        after register_traces."""

    # -- kept totals -------------------------------------------------------

    @abstractmethod
    def fold_run_deltas(self) -> int:
        """Move the oldest pending run changes into run_totals; returns how
        many sum rows that changed (0: nothing was pending).

        Only the sweeper folds, so only it writes run_totals; writers of runs
        append to run_deltas and never wait on a shared sum row."""

    # -- retention ---------------------------------------------------------

    def delete_old_span_rows(self, older_than: float, limit: int) -> list[int]:
        """Of the oldest `limit` span rows, those received before `older_than`;
        returns the number of the trace of each deleted span. Row numbers grow
        with arrival, so the old spans are the first rows, and a step reads no
        further than `limit` rows: a filter on `received_at` alone (not
        indexed) would scan the whole table to learn that nothing is old, as
        every pass did at start and once an hour."""
        result = self.conn.execute(
            text(
                "DELETE FROM spans WHERE id IN (SELECT id FROM "
                "(SELECT id, received_at FROM spans ORDER BY id LIMIT :n) AS head "
                "WHERE received_at < :t) RETURNING trace_ref"
            ),
            {"t": older_than, "n": limit},
        )
        return [int(ref) for (ref,) in result]

    def seal_runs(self, trace_refs: Iterable[int], now: float) -> None:
        """Runs of traces that lost spans to retention keep what they were: no
        later write rewrites or deletes them (migration 0014)."""
        for chunk in in_chunks(sorted(trace_refs)):
            self.cursor().execute(
                f"UPDATE runs SET sealed_at = {self.mark} WHERE sealed_at IS NULL "
                f"AND trace_ref IN ({self.marks(len(chunk))})",
                (now, *chunk),
            )

    def delete_unused_traces(self, older_than: float, limit: int) -> int:
        """Retention of trace rows no span refers to any more, looked for among
        the oldest `limit` numbers only: span retention empties traces in number
        order, and a step that looked further would scan every trace row, a cost
        that grows with the store (bench/ingest.py --growing restarts the server
        each round, and a start begins with a pass). A trace still in use at the
        head (a session that lasts longer than the retention age) holds up the
        ones behind it only while `limit` such rows fill the window. Returns
        how many were deleted. Rows another transaction holds are skipped
        (`skip_locked`): that writer may be waiting for this one."""
        result = self.conn.execute(
            text(
                "DELETE FROM traces WHERE id IN (SELECT id FROM traces WHERE id IN "
                "(SELECT id FROM traces ORDER BY id LIMIT :n) AND touched_at < :t "
                "AND NOT EXISTS (SELECT 1 FROM spans WHERE spans.trace_ref = traces.id)"
                f"{self.skip_locked})"
            ),
            {"t": older_than, "n": limit},
        )
        return int(result.rowcount)

    def delete_resources_seen_before(self, cutoff: float) -> None:
        """Resources last seen before `cutoff` (rows another transaction
        holds are skipped)."""
        self.conn.execute(
            text(
                "DELETE FROM resources WHERE digest IN "
                f"(SELECT digest FROM resources WHERE seen_at < :t{self.skip_locked})"
            ),
            {"t": cutoff},
        )

    def merge_key_tails(self, force: bool = False) -> int:
        """Merge rows kept outside the key indexes into them (SQLite's key
        tail); returns how many. A database that indexes every row at once
        has none."""
        return 0

    # -- locks held across processes ---------------------------------------

    def lock_for_setup(self) -> None:
        """Processes starting together on one empty database migrate it and
        create the first key one after the other (held until this transaction
        ends). One writer needs no lock."""
        return None

    def try_sweeper_lock(self) -> bool:
        """Take the one-per-database sweeper role if free (held until
        released or the connection ends). With one writer every process may
        sweep."""
        return True

    def release_sweeper_lock(self) -> None:
        """Give the sweeper role back."""
        return None

    def lock_certificates(self) -> None:
        """Certificates are issued and appended to their log one transaction
        after the other, across processes (held until this transaction ends):
        one certificate per changed subject, one chain. One writer (SQLite's
        write lock, taken at BEGIN IMMEDIATE) needs no lock."""
        return None


def upsert_conflict(columns: Sequence[str], key: Sequence[str]) -> str:
    """ON CONFLICT (key) that overwrites every other column."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    return f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"


class Backend(Protocol):
    """A database's engines and the sessions over their connections."""

    name: str  # for logs and figures only; behaviour goes through sessions
    reader: Engine
    writer: Engine
    # The folder of the database's file (SQLite), where its signing key is
    # kept by default (docs/certificates.md); None for a server or memory.
    folder: Path | None

    def session(self, conn: Connection) -> SqlSession:
        """A session over a connection the caller holds (no write memory)."""

    def write_session(self, conn: Connection) -> AbstractContextManager[SqlSession]:
        """A session over a write transaction just begun."""

    def committed(self, session: SqlSession) -> None:
        """The write transaction of `session` committed."""

    def vacuum_retained(self) -> None:
        """Make the rows a retention pass deleted free space now (where the
        database does not reuse them at once)."""

    def warm(self) -> None:
        """Read what the writer keeps in memory before the doors open."""
