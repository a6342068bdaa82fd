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

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, TypeVar

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

from collector.storage.recent_keys import KeyTxn, current
from collector.types import TraceKey

T = TypeVar("T")
K = TypeVar("K")

# Ids per IN (...) list, under every dialect's bind-parameter limit.
_IN_CHUNK: Final = 400


def in_chunks(items: Sequence[T], size: int = _IN_CHUNK) -> Iterable[list[T]]:
    """Consecutive lists of at most `size` items (by default an IN (...)
    list's worth of ids)."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


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
    """Insert or overwrite run rows (by id, which comes first), each with
    its trace's number from `traces` (registered earlier in the transaction).
    The last row per id wins, as it would in a sequence of upserts."""
    last = list({row[0]: row for row in rows}.values())
    if not last:
        return
    if is_postgresql(conn):
        updates = ", ".join(f"{c} = excluded.{c}" for c in (*columns, "trace_ref") if c != "id")
        # A sealed run (retention removed spans of its trace) is never rewritten.
        conflict = f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE runs.sealed_at IS NULL"
        _insert_numbered(conn, table, columns, last, conflict, "s.id", list)
        return
    # SQLite: the id index holds merged rows only (storage/recent_keys.py),
    # so there is no conflict to catch: stored runs are found first.
    owner_at, trace_at = columns.index("owner"), columns.index("trace_id")
    refs = trace_numbers(conn, [(row[owner_at], row[trace_at]) for row in last])
    seqs = run_seqs(conn, [row[0] for row in last])
    cur = cursor(conn)
    assigned = ", ".join(f"{c} = ?" for c in (*columns[1:], "trace_ref"))
    cur.executemany(
        f"UPDATE runs SET {assigned} WHERE seq = ? AND sealed_at IS NULL",
        [
            (*row[1:], refs.get((row[owner_at], row[trace_at])), seqs[row[0]])
            for row in last
            if row[0] in seqs
        ],
    )
    added = [(refs.get((row[owner_at], row[trace_at])), *row) for row in last if row[0] not in seqs]
    one = f"({', '.join(['?'] * (len(columns) + 1))}, 0)"
    txn = current(conn)
    for chunk in in_chunks(added, _RUNS_PER_INSERT):
        cur.execute(
            f"INSERT INTO runs (trace_ref, {', '.join(columns)}, merged) "
            f"VALUES {', '.join([one] * len(chunk))} RETURNING id, seq",
            [value for row in chunk for value in row],
        )
        numbered = cur.fetchall()
        if txn is not None:
            txn.added_runs.update((run_id, int(seq)) for run_id, seq in numbered)


# SQLite: new runs per INSERT statement. The runs' triggers (migration 0009)
# make SQLite keep a statement journal: the first change to each page in a
# statement copies the page there. One row per statement copied ~10 pages
# of 16 KiB per run (4.9 GB of temp-file writes per 256k-span round, strace);
# 25 rows share most of their pages. 25 x 34 values stays under the oldest
# default bind limit (999).
_RUNS_PER_INSERT: Final = 25


def trace_numbers(conn: Connection, keys: Iterable[TraceKey]) -> dict[TraceKey, int]:
    """The numbers (traces.id) of these (owner, trace id)s that have a row.

    SQLite: rows not merged yet are in the writer's memory, or else found by
    scanning them in number order (storage/recent_keys.py); merged rows
    through the partial index, whose condition each query repeats, except
    keys the writer's filter says were never stored.
    """
    wanted = sorted(set(keys))
    txn = current(conn)
    found = _remembered(wanted, txn.trace) if txn is not None else {}
    rest: dict[str, list[str]] = {}
    for key in wanted:
        if key not in found and (txn is None or txn.trace_may_be_stored(key)):
            rest.setdefault(key[0], []).append(key[1])
    cur = cursor(conn)
    for owner, trace_ids in rest.items():
        for chunk in in_chunks(trace_ids):
            if is_postgresql(conn):
                cur.execute(
                    "SELECT trace_id, id FROM traces WHERE owner = %s AND trace_id = ANY(%s)",
                    (owner, chunk),
                )
            else:
                sql = _sqlite_by_key(
                    txn, "trace_id, id", "traces", "owner = ? AND", "trace_id", chunk
                )
                cur.execute(sql, (owner, *chunk) * (1 if txn else 2))
            found.update(((owner, trace_id), int(number)) for trace_id, number in cur.fetchall())
    return found


def run_seqs(conn: Connection, run_ids: Iterable[str]) -> dict[str, int]:
    """The row numbers (runs.seq) of these run ids that are stored (SQLite:
    as trace_numbers finds traces)."""
    wanted = sorted(set(run_ids))
    txn = current(conn)
    found = _remembered(wanted, txn.run) if txn is not None else {}
    rest = [
        run_id
        for run_id in wanted
        if run_id not in found and (txn is None or txn.run_may_be_stored(run_id))
    ]
    cur = cursor(conn)
    for chunk in in_chunks(rest):
        if is_postgresql(conn):
            cur.execute("SELECT id, seq FROM runs WHERE id = ANY(%s)", (chunk,))
        else:
            sql = _sqlite_by_key(txn, "id, seq", "runs", "", "id", chunk)
            cur.execute(sql, tuple(chunk) * (1 if txn else 2))
        found.update((run_id, int(seq)) for run_id, seq in cur.fetchall())
    return found


def _remembered(wanted: Sequence[K], lookup: Callable[[K], int | None]) -> dict[K, int]:
    """The numbers the writer's memory has for these keys (no query)."""
    found: dict[K, int] = {}
    for key in wanted:
        number = lookup(key)
        if number is not None:
            found[key] = number
    return found


def _sqlite_by_key(
    txn: KeyTxn | None, picked: str, table: str, owner: str, key: str, values: Sequence[str]
) -> str:
    """SQLite rows of `table` whose `key` is one of `values` (bound after
    `owner`'s value, if any, once per part): merged rows through the index;
    without the writer's memory, also the rows not merged, scanned in number
    order through the small unmerged index."""
    marks = ", ".join(["?"] * len(values))
    merged = f"SELECT {picked} FROM {table} WHERE merged = 1 AND {owner} {key} IN ({marks})"
    if txn is not None:
        return merged
    return (
        f"{merged} UNION ALL SELECT {picked} FROM {table} INDEXED BY ix_{table}_unmerged "
        f"WHERE merged = 0 AND {owner} {key} IN ({marks})"
    )


def select_runs_by_id(
    conn: Connection, columns: Sequence[str], run_ids: Iterable[str]
) -> list[tuple[Any, ...]]:
    """SELECT run columns of the stored runs among these ids."""
    seqs = sorted(run_seqs(conn, run_ids).values())
    return _select_numbered(conn, "runs", "seq", columns, seqs)


def delete_runs(conn: Connection, run_ids: Iterable[str]) -> None:
    """Delete these runs (stored or not), sealed ones excepted (the caller
    leaves those out). SQLite: every writer reads its memory of unmerged rows
    again (a row it remembers may be gone)."""
    found = run_seqs(conn, run_ids)
    if not found:
        return
    mark = marker(conn)
    for chunk in in_chunks(sorted(found.values())):
        cursor(conn).execute(
            f"DELETE FROM runs WHERE seq IN ({', '.join([mark] * len(chunk))})", tuple(chunk)
        )
    if not is_postgresql(conn):
        txn = current(conn)
        if txn is not None:
            txn.removed_runs.update(found)
            for run_id in found:
                txn.added_runs.pop(run_id, None)
        _next_key_generation(conn)


def _next_key_generation(conn: Connection) -> None:
    """SQLite: unmerged rows were merged or removed; every writer's memory
    of them is read again (storage/recent_keys.py)."""
    cursor(conn).execute(
        "INSERT INTO key_merges (id, generation) VALUES (1, 1) "
        "ON CONFLICT (id) DO UPDATE SET generation = generation + 1"
    )
    txn = current(conn)
    if txn is not None:
        txn.reload = True


# SQLite: unmerged rows are merged once there are this many of a table, or an
# 8th of its rows if more. A merge writes nearly every page of the id index
# (~3,100 per million rows at 16 KiB pages, dbstat), so its cost per merged
# row is pages / rows: constant while the tail is a share of the table, but
# growing with the table under a fixed count. With a 32nd, the fixed 20,000
# ruled up to 640k traces (5.8M bench spans) and merges went from 1.6% to 6%
# of the writer's samples between an empty store and a 3.8M-span one
# (py-spy, same payload). A reader without the writer's memory scans the tail,
# ~35 ns a row through its covering index (migration 0013): ~2.5 ms at 70k.
MERGE_MIN_ROWS: Final = 20_000
MERGE_SHARE: Final = 8


def merge_key_tails(conn: Connection, force: bool = False) -> int:
    """SQLite: merge the rows not merged yet into the traces and runs
    indexes, if there are enough of them (or `force`). Returns how many."""
    if is_postgresql(conn):
        return 0
    cur = cursor(conn)
    due = force
    counts = []
    for table, number in (("traces", "id"), ("runs", "seq")):
        cur.execute(
            f"SELECT count(*), (SELECT max({number}) FROM {table}) FROM {table} "
            f"INDEXED BY ix_{table}_unmerged WHERE merged = 0"
        )
        unmerged, top = cur.fetchone()
        counts.append(int(unmerged))
        due = due or int(unmerged) >= max(MERGE_MIN_ROWS, int(top or 0) // MERGE_SHARE)
    if not due or not any(counts):
        return 0
    cur.execute("UPDATE traces SET merged = 1 WHERE merged = 0")
    cur.execute("UPDATE runs SET merged = 1 WHERE merged = 0")
    _next_key_generation(conn)
    return sum(counts)


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
    if is_postgresql(conn):
        marks = ", ".join(["%s"] * len(columns))
        ref = "(SELECT id FROM traces WHERE owner = %s AND trace_id = %s)"
        params: Sequence[tuple[Any, ...]] = [(row[owner_at], row[trace_at], *row) for row in rows]
    else:  # the numbers from the writer's memory or the merged index
        refs = trace_numbers(conn, [(row[owner_at], row[trace_at]) for row in rows])
        marks = ", ".join(["?"] * len(columns))
        ref = "?"
        params = [(refs.get((row[owner_at], row[trace_at])), *row) for row in rows]
    cursor(conn).executemany(
        f"INSERT INTO {table.name} (trace_ref, {names}) VALUES ({ref}, {marks}) {conflict}",
        params,
    )


def select_trace_spans(
    conn: Connection, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
) -> Iterator[tuple[Any, ...]]:
    """Span columns of these traces of one owner, as plain tuples, one at a time."""
    numbers = sorted(trace_numbers(conn, [(owner, t) for t in trace_ids]).values())
    return iter_numbered(conn, "spans", "trace_ref", columns, numbers)


def _select_of_traces(
    conn: Connection, table: str, columns: Sequence[str], owner: str, trace_ids: Sequence[str]
) -> list[tuple[Any, ...]]:
    """Rows of a table keyed by trace number, for (owner, trace id)s: the
    traces' numbers looked up, then their rows (plain tuples)."""
    numbers = sorted(trace_numbers(conn, [(owner, t) for t in trace_ids]).values())
    return _select_numbered(conn, table, "trace_ref", columns, numbers)


def _select_numbered(
    conn: Connection, table: str, key: str, columns: Sequence[str], numbers: Sequence[int]
) -> list[tuple[Any, ...]]:
    """SELECT columns of the rows whose `key` is one of these numbers.

    PostgreSQL: one index probe per number (_BY_NUMBER), never a scan.
    """
    return list(iter_numbered(conn, table, key, columns, numbers))


def iter_numbered(
    conn: Connection, table: str, key: str, columns: Sequence[str], numbers: Sequence[int]
) -> Iterator[tuple[Any, ...]]:
    """The same rows one at a time: a reader that turns each into something
    smaller (span facts) never holds them all as tuples too."""
    cur = cursor(conn)
    if is_postgresql(conn):
        cur.execute(rows_by_number_pg(table, key, columns), (list(numbers),))
        yield from cur
        return
    for chunk in in_chunks(numbers):
        cur.execute(
            f"SELECT {', '.join(columns)} FROM {table} "
            f"WHERE {key} IN ({', '.join('?' * len(chunk))})",
            tuple(chunk),
        )
        yield from cur


# PostgreSQL: numbers as rows, each the parameter of a probe into an index.
# `key IN (...)` or `= ANY(...)` is planned on the table's statistics, and a
# table autovacuum has not analysed yet (a new database, its first minute
# of ingest) looks small enough to scan: 35 ms a call instead of 0.4 on
# 51,000 spans (EXPLAIN ANALYZE), a third of the rate of a new store.
# OFFSET 0 keeps the planner from turning the probes back into one join.
_BY_NUMBER: Final = "unnest(%s::bigint[]) AS k(n)"
SPANS_PER_NUMBER_PG: Final = (
    f"SELECT k.n, (SELECT count(*) FROM spans WHERE trace_ref = k.n) FROM {_BY_NUMBER}"
)


def rows_by_number_pg(table: str, key: str, columns: Sequence[str]) -> str:
    """PostgreSQL: SELECT columns of the rows whose `key` is one of an array
    of numbers (the one parameter), one index probe per number."""
    return (
        f"SELECT x.* FROM {_BY_NUMBER} JOIN LATERAL (SELECT {', '.join(columns)} "
        f"FROM {table} WHERE {key} = k.n OFFSET 0) AS x ON true"
    )


def count_spans_by_number(conn: Connection, numbers: Sequence[int]) -> dict[int, int]:
    """How many spans each of these trace numbers has (none: left out)."""
    cur = cursor(conn)
    if is_postgresql(conn):
        cur.execute(SPANS_PER_NUMBER_PG, (list(numbers),))
        return {int(number): int(count) for number, count in cur.fetchall() if count}
    counts: dict[int, int] = {}
    for chunk in in_chunks(numbers):
        cur.execute(
            "SELECT trace_ref, count(*) FROM spans "
            f"WHERE trace_ref IN ({', '.join('?' * len(chunk))}) GROUP BY trace_ref",
            tuple(chunk),
        )
        counts.update((int(number), int(count)) for number, count in cur.fetchall())
    return counts


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
    ends (sorted: no wait cycle). SQLite: inserted if new, not merged into
    the index yet (storage/recent_keys.py), never rewritten (a rewrite would
    dirty a random page); BEGIN IMMEDIATE holds the database.
    """
    if is_postgresql(conn):
        _for_traces(
            conn,
            traces,
            now,
            "INSERT INTO traces (owner, trace_id, touched_at) "
            "SELECT o, t, %s FROM unnest(%s::text[], %s::text[]) AS k(o, t) ORDER BY o, t "
            "ON CONFLICT (owner, trace_id) DO UPDATE SET touched_at = excluded.touched_at",
        )
        return
    ordered = sorted(set(traces))
    known = trace_numbers(conn, ordered)
    txn = current(conn)
    cur = cursor(conn)
    for key in ordered:
        if key not in known:
            cur.execute(
                "INSERT INTO traces (owner, trace_id, touched_at, merged) VALUES (?, ?, ?, 0)",
                (*key, now),
            )
            if txn is not None:
                txn.added_traces[key] = int(cur.lastrowid)


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
    # Their agents' board rows are refreshed next (storage/board.py).
    marked = (
        "INSERT INTO board_stale (agent_id) SELECT DISTINCT agent_id FROM {source} "
        "WHERE true ON CONFLICT (agent_id) DO NOTHING"
    )
    cur = cursor(conn)
    if postgresql:
        cur.execute(
            "WITH moved AS (DELETE FROM run_deltas WHERE id IN "
            "(SELECT id FROM run_deltas ORDER BY id LIMIT %s) RETURNING *), "
            f"marked AS ({marked.format(source='moved')}) "
            + folded.format(source="moved")
            + " RETURNING 1",
            (_FOLD_BATCH,),
        )
        return len(cur.fetchall())
    cur.execute("SELECT id FROM run_deltas ORDER BY id LIMIT 1 OFFSET ?", (_FOLD_BATCH - 1,))
    row = cur.fetchone()
    bound = "" if row is None else f" WHERE id <= {int(row[0])}"
    cur.execute(marked.format(source=f"(SELECT * FROM run_deltas{bound})"))
    cur.execute(folded.format(source=f"(SELECT * FROM run_deltas{bound})"))
    changed = int(cur.rowcount)
    cur.execute(f"DELETE FROM run_deltas{bound}")
    return changed


def mark_pending(conn: Connection, traces: Iterable[tuple[str, str]], now: float) -> None:
    """Mark (owner, trace id)s whose runs must be recomputed (`pending_traces`).

    In the transaction that stores their spans, after register_traces: on
    PostgreSQL those trace rows are locked, so marks are written in their order.
    """
    if not is_postgresql(conn):
        numbers = sorted(trace_numbers(conn, traces).values())
        cursor(conn).executemany(
            "INSERT INTO pending_traces (trace_ref, marked_at) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING",
            [(number, now) for number in numbers],
        )
        return
    _for_traces(
        conn,
        traces,
        now,
        "INSERT INTO pending_traces (trace_ref, marked_at) "
        "SELECT t.id, %s FROM traces t JOIN unnest(%s::text[], %s::text[]) AS k(o, tr) "
        "ON t.owner = k.o AND t.trace_id = k.tr ORDER BY t.id ON CONFLICT DO NOTHING",
    )


def _for_traces(conn: Connection, traces: Iterable[tuple[str, str]], now: float, sql: str) -> None:
    """PostgreSQL: one statement over arrays (now, owners[], trace ids[]), sorted."""
    ordered = sorted(set(traces))
    if ordered:
        cursor(conn).execute(sql, (now, [o for o, _ in ordered], [t for _, t in ordered]))


def delete_unused_traces(conn: Connection, older_than: float, limit: int) -> int:
    """Retention of trace rows no span refers to any more, looked for among
    the oldest `limit` numbers only: span retention empties traces in number
    order, and a step that looked further would scan every trace row, a cost
    that grows with the store (bench/ingest.py --growing restarts the server
    each round, and a start begins with a pass). A trace still in use at the
    head (a session that lasts longer than the retention age) holds up the
    ones behind it only while `limit` such rows fill the window. Returns
    how many were deleted.

    PostgreSQL: never waits on a row a writer holds right now (that writer
    may be waiting for this transaction: a duplicate of a span being
    deleted), and a row a writer touched since is kept (`touched_at` is
    re-checked on the newest row version).
    """
    lock = " FOR UPDATE SKIP LOCKED" if is_postgresql(conn) else ""
    result = conn.execute(
        text(
            "DELETE FROM traces WHERE id IN (SELECT id FROM traces WHERE id IN "
            "(SELECT id FROM traces ORDER BY id LIMIT :n) AND touched_at < :t "
            "AND NOT EXISTS (SELECT 1 FROM spans WHERE spans.trace_ref = traces.id)"
            f"{lock})"
        ),
        {"t": older_than, "n": limit},
    )
    deleted = int(result.rowcount)
    if deleted and not is_postgresql(conn):
        _next_key_generation(conn)  # some may be rows the writer remembers
    return deleted


def delete_old_span_rows(conn: Connection, older_than: float, limit: int) -> list[int]:
    """Of the oldest `limit` span rows, those received before `older_than`;
    returns the number of the trace of each deleted span. Row numbers grow
    with arrival, so the old spans are the first rows, and a step reads no
    further than `limit` rows: a filter on `received_at` alone (not indexed)
    would scan the whole table to learn that nothing is old, as every pass
    did at start and once an hour."""
    result = conn.execute(
        text(
            "DELETE FROM spans WHERE id IN (SELECT id FROM "
            "(SELECT id, received_at FROM spans ORDER BY id LIMIT :n) AS head "
            "WHERE received_at < :t) RETURNING trace_ref"
        ),
        {"t": older_than, "n": limit},
    )
    return [int(ref) for (ref,) in result]


def seal_runs(conn: Connection, trace_refs: Iterable[int], now: float) -> None:
    """Runs of traces that lost spans to retention keep what they were: no
    later write rewrites or deletes them (migration 0014)."""
    mark = marker(conn)
    for chunk in in_chunks(sorted(trace_refs)):
        cursor(conn).execute(
            f"UPDATE runs SET sealed_at = {mark} WHERE sealed_at IS NULL "
            f"AND trace_ref IN ({', '.join([mark] * len(chunk))})",
            (now, *chunk),
        )


# Tables span retention deletes from (PostgreSQL: vacuumed after a pass).
RETAINED_TABLES: Final = ("spans", "traces", "resources", "pending_traces")


def vacuum_retained(conn: Connection) -> None:
    """PostgreSQL, on a connection in autocommit: make the rows a retention
    pass deleted free space now. Autovacuum comes at most once a naptime (a
    minute), and ingest meanwhile extends the tables instead of reusing the
    space (bench/retention.py). SQLite reuses freed pages at once."""
    if is_postgresql(conn):
        conn.exec_driver_sql(f"VACUUM {', '.join(RETAINED_TABLES)}")


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
