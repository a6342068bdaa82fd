"""The only module with dialect-specific SQL: ON CONFLICT, paramstyles, locks.

The hot paths (span batches, run upserts, fact loads) go straight to the
DB-API cursor with tuples: SQLAlchemy's per-row parameter processing cost
more than the insert itself (measured in bench/ingest.py).

Several processes on one PostgreSQL database: every transaction that writes a
trace's spans or runs first row-locks that trace's `traces` row (an upsert,
all of a transaction's traces in one statement, sorted, so two transactions
never wait on each other in a cycle). Per-trace work is then
serialised exactly as SQLite's single writer serialises it: a run computed
from N spans is checked against the stored count and written with no insert
of that trace in between, and "no span of this trace is stored yet" (the
single-request fast path) stays true until the commit. Row locks rather than
`pg_advisory_xact_lock`: a 20,000-span batch can touch thousands of traces,
and advisory locks live in the bounded shared lock table while row locks
live in the rows. Other row waits (agents, runs) happen in sorted order too;
span retention skips trace rows in use. The one cycle left open needs one
`badge.run.id` reused across two traces written by two processes at the
same instant; PostgreSQL then aborts one transaction, whose exports get a
retryable 503: nothing is lost.
A grade and a new run it names wait for each other through `hold_runs`.
Advisory locks remain for two one-per-database roles: setup (migrations and
the first key; a transaction lock) and the sweeper (a session lock held by
one process, `try_advisory_lock`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    text,
)
from sqlalchemy.engine import Connection

# Ids per IN (...) list, under every dialect's bind-parameter limit.
_IN_CHUNK: Final = 400


def in_chunks(items: Sequence[str]) -> Iterable[list[str]]:
    """IN (...) lists of at most _IN_CHUNK ids."""
    for start in range(0, len(items), _IN_CHUNK):
        yield list(items[start : start + _IN_CHUNK])


def exact(rows: Iterable[tuple[Any, ...]]) -> Iterable[tuple[Any, ...]]:
    """Named rows as plain tuples, for binding: sqlite3 binds an exact tuple
    on its fast path, a tuple subclass (a NamedTuple) through the sequence
    protocol: 6.5 against 5.2 us per 20-column span row (measured here)."""
    return map(tuple, rows)


def marker(conn: Connection) -> str:
    """The driver's placeholder for a bound value."""
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def cursor(conn: Connection) -> Any:
    """The DB-API cursor of this connection, inside its current transaction."""
    return conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]


def insert_ignore_rows(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert tuples; a row whose unique key exists already is skipped."""
    if not rows:
        return
    if is_postgresql(conn) and len(rows) >= _COPY_MIN_ROWS:
        _insert_copied(conn, table, columns, rows, "ON CONFLICT DO NOTHING")
        return
    marks = ", ".join([marker(conn)] * len(columns))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
    cursor(conn).executemany(sql, exact(rows))


def upsert_rows(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    key: Sequence[str],
) -> None:
    """Insert tuples, or overwrite every non-key column of the existing row."""
    if not rows:
        return
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    conflict = f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"
    if is_postgresql(conn) and len(rows) >= _COPY_MIN_ROWS:
        # One statement may not update a row twice: the last row per key wins,
        # as it would in a sequence of upserts.
        where = [columns.index(name) for name in key]
        last = {tuple(row[i] for i in where): row for row in rows}
        _insert_copied(conn, table, columns, list(last.values()), conflict)
        return
    marks = ", ".join([marker(conn)] * len(columns))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks}) {conflict}"
    cursor(conn).executemany(sql, exact(rows))


def upsert_runs(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert or overwrite run rows (conflict on id), each with its trace's
    number looked up in `traces` (registered earlier in the transaction)."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in (*columns, "trace_ref") if c != "id")

    def last_per_id(found: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        # One statement may not update a row twice: the last row per id wins,
        # as it would in a sequence of upserts.
        return list({row[0]: row for row in found}.values())

    conflict = f"ON CONFLICT (id) DO UPDATE SET {updates}"
    _insert_numbered(conn, table, columns, rows, conflict, "s.id", last_per_id)


def select_runs_of_traces(
    conn: Connection, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
) -> list[tuple[Any, ...]]:
    """SELECT run columns of these traces of one owner (through their numbers)."""
    return _select_of_traces(conn, "runs", columns, owner, trace_ids)


# PostgreSQL: from this many rows on, binary COPY into a per-session staging
# table and one INSERT ... SELECT beat executemany's statement per row
# (bench/ingest.py --store postgresql; about 1.4x on span rows).
_COPY_MIN_ROWS: Final = 32
_BINARY_TYPES: Final = (
    (SmallInteger, "int2"),
    (BigInteger, "int8"),
    (Integer, "int4"),
    (Float, "float8"),
    (Boolean, "bool"),
    (LargeBinary, "bytea"),
    (String, "text"),
)


def _binary_type(table: Table, column: str) -> str:
    declared = table.c[column].type
    for kind, name in _BINARY_TYPES:
        if isinstance(declared, kind):
            return name
    raise TypeError(f"no COPY type for {table.name}.{column} ({declared})")


def _insert_copied(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    conflict: str,
) -> None:
    """Rows in by binary COPY, then into the table in one statement, in order."""
    names = ", ".join(columns)
    _copied_then(
        conn,
        table,
        columns,
        rows,
        f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {_staging(table)} "
        f"ORDER BY {columns[0]} {conflict}",
    )


def _staging(table: Table) -> str:
    """This session's staging table for `table` (a temp table, emptied at commit)."""
    return f"_staged_{table.name}"


def _copied_then(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    statement: str,
) -> None:
    """Binary COPY rows into the staging table, run `statement` (an INSERT ...
    SELECT from it), and empty it again."""
    names = ", ".join(columns)
    staging = _staging(table)
    cur = cursor(conn)
    cur.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS "
        f"SELECT {names} FROM {table.name} WITH NO DATA"
    )
    with cur.copy(f"COPY {staging} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([_binary_type(table, c) for c in columns])
        for row in rows:
            copy.write_row(row)
    cur.execute(statement)
    cur.execute(f"DELETE FROM {staging}")  # cheaper than TRUNCATE; emptied at commit anyway


def insert_spans(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert span rows, each keyed by its trace's number from `traces`
    (register_traces ran first); duplicates are skipped."""
    span_at = columns.index("span_id")
    owner_at, trace_at = columns.index("owner"), columns.index("trace_id")

    def first_per_span(found: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        # One statement sees its duplicates in no set order: the first one
        # is kept here, as a sequence of inserts would keep it.
        first: dict[tuple[Any, Any, Any], tuple[Any, ...]] = {}
        for row in found:
            first.setdefault((row[owner_at], row[trace_at], row[span_at]), row)
        return list(first.values())

    order = "t.id, s.span_id"
    _insert_numbered(conn, table, columns, rows, "ON CONFLICT DO NOTHING", order, first_per_span)


def _insert_numbered(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    conflict: str,
    copy_order: str,
    distinct: Callable[[Sequence[tuple[Any, ...]]], list[tuple[Any, ...]]],
) -> None:
    """Insert rows with `trace_ref`, their trace's number, looked up in
    `traces` by the rows' own owner and trace_id (spans and runs).
    `distinct` leaves one row per key for PostgreSQL's one COPY statement."""
    if not rows:
        return
    names = ", ".join(columns)
    owner_at, trace_at = columns.index("owner"), columns.index("trace_id")
    if is_postgresql(conn) and len(rows) >= _COPY_MIN_ROWS:
        picked = ", ".join(f"s.{c}" for c in columns)
        _copied_then(
            conn,
            table,
            columns,
            distinct(rows),
            f"INSERT INTO {table.name} (trace_ref, {names}) SELECT t.id, {picked} "
            # LEFT: a trace never registered fails NOT NULL, loudly, not dropped.
            f"FROM {_staging(table)} s LEFT JOIN traces t "
            f"ON t.owner = s.owner AND t.trace_id = s.trace_id ORDER BY {copy_order} {conflict}",
        )
        return
    lookup = "(SELECT id FROM traces WHERE owner = {o} AND trace_id = {t})"
    if is_postgresql(conn):
        marks = ", ".join(["%s"] * len(columns))
        ref = lookup.format(o="%s", t="%s")
        params: Sequence[tuple[Any, ...]] = [(row[owner_at], row[trace_at], *row) for row in rows]
    else:  # numbered parameters: the row tuple is bound as it is
        marks = ", ".join(f"?{i}" for i in range(1, len(columns) + 1))
        ref = lookup.format(o=f"?{owner_at + 1}", t=f"?{trace_at + 1}")
        params = list(exact(rows))
    cursor(conn).executemany(
        f"INSERT INTO {table.name} (trace_ref, {names}) VALUES ({ref}, {marks}) {conflict}",
        params,
    )


def select_trace_spans(
    conn: Connection, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
) -> list[tuple[Any, ...]]:
    """SELECT span columns of these traces of one owner, as plain tuples."""
    return _select_of_traces(conn, "spans", columns, owner, trace_ids)


def _select_of_traces(
    conn: Connection, table: str, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
) -> list[tuple[Any, ...]]:
    """Rows of a table keyed by trace number, for (owner, trace id)s: the
    traces' numbers looked up, then their rows (plain tuples)."""
    mark = marker(conn)
    picked = ", ".join(f"x.{c}" for c in columns)
    sql = (
        f"SELECT {picked} FROM traces t JOIN {table} x ON x.trace_ref = t.id "
        f"WHERE t.owner = {mark} AND t.trace_id IN ({', '.join([mark] * len(trace_ids))})"
    )
    cur = cursor(conn)
    cur.execute(sql, (owner, *trace_ids))
    rows: list[tuple[Any, ...]] = cur.fetchall()
    return rows


def select_in(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    equal: dict[str, Any],
    in_column: str,
    values: Sequence[Any],
) -> list[tuple[Any, ...]]:
    """SELECT columns WHERE equal... AND in_column IN (values), as plain tuples."""
    mark = marker(conn)
    where = [f"{name} = {mark}" for name in equal]
    where.append(f"{in_column} IN ({', '.join([mark] * len(values))})")
    sql = f"SELECT {', '.join(columns)} FROM {table.name} WHERE {' AND '.join(where)}"
    cur = cursor(conn)
    cur.execute(sql, (*equal.values(), *values))
    rows: list[tuple[Any, ...]] = cur.fetchall()
    return rows


def is_postgresql(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def register_traces(conn: Connection, traces: Iterable[tuple[str, str]], now: float) -> None:
    """Give every (owner, trace id) of this transaction its `traces` row.

    PostgreSQL: an upsert, so the transaction also holds those rows until it
    ends (sorted: no wait cycle). SQLite: inserted if new, never rewritten (a
    rewrite would dirty a random page); BEGIN IMMEDIATE holds the database.
    """
    _for_traces(
        conn,
        traces,
        now,
        sqlite="INSERT INTO traces (owner, trace_id, touched_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT DO NOTHING",
        postgresql="INSERT INTO traces (owner, trace_id, touched_at) "
        "SELECT o, t, %s FROM unnest(%s::text[], %s::text[]) AS k(o, t) ORDER BY o, t "
        "ON CONFLICT (owner, trace_id) DO UPDATE SET touched_at = excluded.touched_at",
    )


def hold_runs(conn: Connection, run_ids: Sequence[str]) -> None:
    """PostgreSQL: wait until no other transaction is storing one of these
    runs, and keep any other from storing one new until this one ends.

    Why: a grade and a new run of it, committed at the same instant by two
    processes, would each miss the other (the run writer reads grades after
    storing its runs; the grade updates its run if stored). An INSERT that
    meets a key another transaction has just inserted waits for it, so a
    placeholder row per run id, inserted where none is stored and deleted at
    once, makes either side wait for the other: never visible to anyone,
    never committed. SQLite: the write lock already serialises both.
    """
    if not is_postgresql(conn) or not run_ids:
        return
    cur = cursor(conn)
    cur.execute(
        "INSERT INTO runs (id, owner, agent_id, trace_id, run_key, status, started_ns, "
        "ended_ns, tool_errors, llm_calls, error_class, span_count, has_agent_span, "
        "last_received_at, tool_calls, updated_at) "
        "SELECT id, '', '', '', '', 'held', 0, 0, 0, 0, '', 0, false, 0, '[]', 0 "
        "FROM unnest(%s::text[]) AS k(id) ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id",
        (sorted(set(run_ids)),),
    )
    held = [row[0] for row in cur.fetchall()]
    if held:
        cur.execute("DELETE FROM runs WHERE id = ANY(%s)", (held,))


# run_deltas -> run_totals (migration 0009): keys, sums, and how each sum folds.
_TOTALS_KEY: Final = "agent_id, version_key, status, cost_source_key, success_key, task_key"
_TOTALS_ADDED: Final = ("runs", "latency_sum", "latency_n", "cost_sum", "graded", "listed")
_FOLD_BATCH: Final = 50_000


def fold_run_deltas(conn: Connection) -> int:
    """Move the oldest pending run changes into run_totals; returns how many
    sum rows that changed (0: nothing was pending).

    Only the sweeper folds, so only it writes run_totals; writers of runs
    append to run_deltas and never wait on a shared sum row. PostgreSQL: the
    rows summed are exactly the rows deleted (one statement, one snapshot),
    so a change committed meanwhile waits for the next fold.
    """
    postgresql = is_postgresql(conn)
    least, greatest = ("LEAST", "GREATEST") if postgresql else ("min", "max")
    updates = ", ".join(f"{c} = run_totals.{c} + excluded.{c}" for c in _TOTALS_ADDED)
    # SQLite's two-argument min/max are NULL when either is; PostgreSQL's
    # LEAST/GREATEST skip NULLs: COALESCE gives both that reading.
    updates += (
        f", first_started = COALESCE({least}(run_totals.first_started, excluded.first_started), "
        "run_totals.first_started, excluded.first_started)"
        f", last_started = COALESCE({greatest}(run_totals.last_started, excluded.last_started), "
        "run_totals.last_started, excluded.last_started)"
    )
    sums = ", ".join(f"sum({c})" for c in _TOTALS_ADDED)
    columns = f"{_TOTALS_KEY}, {', '.join(_TOTALS_ADDED)}, first_started, last_started"
    folded = (
        f"INSERT INTO run_totals ({columns}) SELECT {_TOTALS_KEY}, {sums}, "
        "min(first_started), max(last_started) FROM {source} WHERE true "
        f"GROUP BY {_TOTALS_KEY} ON CONFLICT ({_TOTALS_KEY}) DO UPDATE SET {updates}"
    )
    cur = cursor(conn)
    if postgresql:
        cur.execute(
            "WITH moved AS (DELETE FROM run_deltas WHERE id IN "
            "(SELECT id FROM run_deltas ORDER BY id LIMIT %s) RETURNING *) "
            + folded.format(source="moved")
            + " RETURNING 1",
            (_FOLD_BATCH,),
        )
        return len(cur.fetchall())
    cur.execute("SELECT id FROM run_deltas ORDER BY id LIMIT 1 OFFSET ?", (_FOLD_BATCH - 1,))
    row = cur.fetchone()
    bound = "" if row is None else f" WHERE id <= {int(row[0])}"
    cur.execute(folded.format(source=f"(SELECT * FROM run_deltas{bound})"))
    changed = int(cur.rowcount)
    cur.execute(f"DELETE FROM run_deltas{bound}")
    return changed


def mark_pending(conn: Connection, traces: Iterable[tuple[str, str]], now: float) -> None:
    """Mark (owner, trace id)s whose runs must be recomputed (`pending_traces`).

    In the transaction that stores their spans, after register_traces: on
    PostgreSQL those trace rows are locked, so marks are written in their order.
    """
    _for_traces(
        conn,
        traces,
        now,
        sqlite="INSERT INTO pending_traces (trace_ref, marked_at) SELECT id, ?3 FROM traces "
        "WHERE owner = ?1 AND trace_id = ?2 ON CONFLICT DO NOTHING",
        postgresql="INSERT INTO pending_traces (trace_ref, marked_at) "
        "SELECT t.id, %s FROM traces t JOIN unnest(%s::text[], %s::text[]) AS k(o, tr) "
        "ON t.owner = k.o AND t.trace_id = k.tr ORDER BY t.id ON CONFLICT DO NOTHING",
    )


def _for_traces(
    conn: Connection,
    traces: Iterable[tuple[str, str]],
    now: float,
    *,
    sqlite: str,
    postgresql: str,
) -> None:
    """One statement per (owner, trace id, now) on SQLite (?1, ?2, ?3), sorted;
    one statement over arrays on PostgreSQL (now, owners[], trace ids[])."""
    ordered = sorted(set(traces))
    if not ordered:
        return
    if not is_postgresql(conn):
        cursor(conn).executemany(sqlite, [(owner, trace_id, now) for owner, trace_id in ordered])
        return
    cursor(conn).execute(postgresql, (now, [o for o, _ in ordered], [t for _, t in ordered]))


def delete_unused_traces(conn: Connection, older_than: float, limit: int) -> int:
    """Retention of trace rows no span refers to any more: at most `limit`,
    the oldest numbers first (where the old ones are). Returns how many.

    PostgreSQL: never waits on a row a writer holds right now (that writer
    may be waiting for this transaction: a duplicate of a span being
    deleted), and a row a writer touched since is kept (`touched_at` is
    re-checked on the newest row version).
    """
    unused = (
        "touched_at < :t AND NOT EXISTS (SELECT 1 FROM spans WHERE spans.trace_ref = traces.id)"
    )
    lock = " FOR UPDATE SKIP LOCKED" if is_postgresql(conn) else ""
    result = conn.execute(
        text(
            "DELETE FROM traces WHERE id IN "
            f"(SELECT id FROM traces WHERE {unused} ORDER BY id LIMIT :n{lock})"
        ),
        {"t": older_than, "n": limit},
    )
    return int(result.rowcount)


def delete_old_span_rows(conn: Connection, older_than: float, limit: int) -> int:
    """At most `limit` spans received before `older_than`, the oldest rows
    first: row ids grow with arrival, so the old spans are found at once."""
    result = conn.execute(
        text(
            "DELETE FROM spans WHERE id IN "
            "(SELECT id FROM spans WHERE received_at < :t ORDER BY id LIMIT :n)"
        ),
        {"t": older_than, "n": limit},
    )
    return int(result.rowcount)


# Keys of the session/transaction advisory locks (PostgreSQL), one per role.
SETUP_LOCK: Final = 0x6261646765_01  # "badge" 1
SWEEPER_LOCK: Final = 0x6261646765_02


def lock_for_setup(conn: Connection) -> None:
    """Processes starting together on one empty database migrate it and create
    the first key one after the other (held until this transaction ends)."""
    if is_postgresql(conn):
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SETUP_LOCK})


def try_advisory_lock(conn: Connection, key: int) -> bool:
    """Take a session lock if free (held until unlocked or the connection ends)."""
    if not is_postgresql(conn):
        return True
    return bool(conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar())


def advisory_unlock(conn: Connection, key: int) -> None:
    if is_postgresql(conn):
        conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
