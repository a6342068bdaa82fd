"""SQLite: the writer's memory of traces and runs not merged into their
random-keyed indexes yet (migration 0012).

Why: a new trace's entry in the (owner, trace_id) index and a new run's in
the id index each land on a random page, and SQLite's WAL writes a changed
page whole at every commit, so a store of millions of spans wrote a page per
new trace and per new run (bench/ingest.py --growing). New rows are written
outside those indexes (`merged` = 0) and found here; the sweeper merges them
in bulk (`merge_tails`), writing each index page once for thousands of rows.

Why it stays right: only a transaction holding SQLite's write lock uses or
changes this memory, and it first brings it up to date (`transaction`): rows
any other connection or process added since are read by number (numbers
only grow: AUTOINCREMENT), and anything that removes rows not merged yet, or
merges them, counts up `key_merges.generation`, after which the memory is
read again whole. What a transaction adds is kept only once it committed
(`committed`). The SQLite session of a write transaction is handed this
view (`storage.sqlite.session`); a session without it (a reader) finds
unmerged rows by scanning them in number order (`storage.sqlite.lookups`),
which is correct and costs a few milliseconds.

Keys never stored are not looked up at all: every key stored is added to a
filter (storage/key_filter.py) that says which keys may be stored. `warm`
reads the stored keys in before the doors open; without it (commands other
than `serve`) the filter is filled in number order, a bounded number of rows
per transaction. Either way it is used only once it holds every stored row's
key; rows that other processes add are read by number as above. Removals and
merges leave it as it is (a removed key costs a lookup). Traces are kept by
trace id alone: the same id under another owner only costs a lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy.engine import Connection

from collector.storage.sqlite.key_filter import KeyFilter
from collector.types import TraceKey

# Stored rows read into a key filter per transaction until it holds them all:
# a store of a million runs is covered after 50 transactions, each reading
# ~20 MB more (rows of ~1 KB) instead of holding the write lock for all of it.
FILTER_ROWS_PER_TXN: Final = 20_000


@dataclass
class KeyTxn:
    """One write transaction's view: the memory as of its start, plus what
    it adds (applied to the memory only after the commit)."""

    traces: dict[TraceKey, int]
    runs: dict[str, int]
    added_traces: dict[TraceKey, int] = field(default_factory=dict)
    added_runs: dict[str, int] = field(default_factory=dict)
    removed_runs: set[str] = field(default_factory=set)
    reload: bool = False  # rows were merged or removed: read the memory again
    # Every stored key (None: not read whole yet, so every key is looked up).
    trace_filter: KeyFilter | None = None
    run_filter: KeyFilter | None = None

    def trace(self, key: TraceKey) -> int | None:
        found = self.added_traces.get(key)
        return found if found is not None else self.traces.get(key)

    def run(self, run_id: str) -> int | None:
        found = self.added_runs.get(run_id)  # stored again after a removal
        if found is not None or run_id in self.removed_runs:
            return found
        return self.runs.get(run_id)

    def trace_may_be_stored(self, key: TraceKey) -> bool:
        """False only for a trace with no row (before this transaction:
        `trace` has the rows it added)."""
        return self.trace_filter is None or key[1] in self.trace_filter

    def run_may_be_stored(self, run_id: str) -> bool:
        return self.run_filter is None or run_id in self.run_filter


class _Filled:
    """A key filter and how far, in row numbers, it holds every stored key."""

    def __init__(self, table: str, number: str, key: str, unique: str) -> None:
        """`unique`: the table's index of merged keys (storage/tables.py)."""
        self.filter = KeyFilter()
        self.top = 0  # every row numbered up to this has its key in the filter
        self.whole = False  # and no row above it was stored at the last look
        self._table, self._number, self._key = table, number, key
        self._indexes = ((unique, 1), (f"ix_{table}_unmerged", 0))
        self._sql = (
            f"SELECT {number}, {key} FROM {table} WHERE {number} > ? "
            f"ORDER BY {number} LIMIT {FILTER_ROWS_PER_TXN}"
        )

    def read_all(self, cur: Any) -> None:
        """Every stored key, from the two indexes that hold the keys (the
        table's rows are wide). Rows stored after `top` was read are
        numbered above it, so the next `read_on` reads them."""
        top = cur.execute(f"SELECT max({self._number}) FROM {self._table}").fetchone()[0]
        for index, merged in self._indexes:
            cur.execute(
                f"SELECT {self._key} FROM {self._table} INDEXED BY {index} WHERE merged = {merged}"
            )
            self.filter.update(key for (key,) in cur)
        self.top = max(self.top, int(top or 0))

    def read_on(self, cur: Any) -> KeyFilter | None:
        """Read the next stored rows in; the filter if it now holds all."""
        rows = cur.execute(self._sql, (self.top,)).fetchall()
        self.filter.update(key for _, key in rows)
        if rows:
            self.top = int(rows[-1][0])
        self.whole = len(rows) < FILTER_ROWS_PER_TXN
        return self.filter if self.whole else None

    def add(self, keys: Iterable[str], numbers: Iterable[int]) -> None:
        """A committed transaction's rows, if they are all the rows stored
        since (numbered on from `top`); else they are read in by number."""
        ordered = sorted(numbers)
        if not self.whole or not ordered or ordered[-1] - self.top != len(ordered):
            return
        self.filter.update(keys)
        self.top = ordered[-1]


class RecentKeys:
    """Process-wide; used by one write transaction at a time (SQLite has
    one writer), guarded by a lock all the same."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: dict[TraceKey, int] = {}
        self._runs: dict[str, int] = {}
        self._trace_top = 0  # the highest traces.id read or written
        self._run_top = 0
        self._generation: int | None = None  # None: read everything again
        self._trace_keys = _Filled("traces", "id", "trace_id", "ux_traces_owner_trace")
        self._run_keys = _Filled("runs", "seq", "id", "ux_runs_id")

    def transaction(self, conn: Connection) -> KeyTxn:
        """This write transaction's view, up to date (call it first in the
        transaction, which holds the write lock: BEGIN IMMEDIATE)."""
        with self._lock:
            trace_filter, run_filter = self._catch_up(conn)
            return KeyTxn(
                self._traces, self._runs, trace_filter=trace_filter, run_filter=run_filter
            )

    def committed(self, txn: KeyTxn) -> None:
        """The transaction committed: what it added is in the database."""
        with self._lock:
            added = txn.added_traces
            self._trace_keys.add([trace_id for _, trace_id in added], added.values())
            self._run_keys.add(txn.added_runs, txn.added_runs.values())
            if txn.reload:
                self._generation = None
                return
            self._traces.update(txn.added_traces)
            self._runs.update(txn.added_runs)
            for run_id in txn.removed_runs:
                self._runs.pop(run_id, None)
            self._trace_top = max([self._trace_top, *txn.added_traces.values()])
            self._run_top = max([self._run_top, *txn.added_runs.values()])

    def warm(self, conn: Connection) -> None:
        """Read every stored key into the filters, before the doors open
        (collector/service.py): about 2 s per million keys once at start
        (bench/key_filters.py: 1.2M in 1.6 to 2.6 s), rather than in the
        first write transactions while exports wait on them.

        `conn` must be in a transaction: the merged keys and the ones not
        merged are read from two indexes, and a merge committed between the
        two reads would move rows out of the second before it is read."""
        raw: Any = conn.connection.dbapi_connection
        if not raw.in_transaction:
            raise ValueError("warm needs a read transaction (one snapshot of both indexes)")
        cur = raw.cursor()
        with self._lock:
            self._trace_keys.read_all(cur)
            self._run_keys.read_all(cur)
        cur.close()

    def run_hint(self, run_id: str) -> int | None:
        """A run's row number if remembered (readers check it against the row)."""
        return self._runs.get(run_id)

    def _catch_up(self, conn: Connection) -> tuple[KeyFilter | None, KeyFilter | None]:
        cur = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        row = cur.execute("SELECT generation FROM key_merges WHERE id = 1").fetchone()
        generation = 0 if row is None else int(row[0])
        if generation != self._generation:
            self._traces, self._runs = {}, {}
            self._trace_top = self._run_top = 0
            self._generation = generation
        # Rows not merged, above what is known: all of them after a reload,
        # else only what another connection added since.
        traces = cur.execute(
            "SELECT id, owner, trace_id FROM traces INDEXED BY ix_traces_unmerged "
            "WHERE merged = 0 AND id > ?",
            (self._trace_top,),
        ).fetchall()
        for number, owner, trace_id in traces:
            self._traces[(owner, trace_id)] = number
        runs = cur.execute(
            "SELECT seq, id FROM runs INDEXED BY ix_runs_unmerged WHERE merged = 0 AND seq > ?",
            (self._run_top,),
        ).fetchall()
        for seq, run_id in runs:
            self._runs[run_id] = seq
        # Numbers given to rows merged or removed meanwhile are never read
        # again, so the tops may pass over them.
        top = cur.execute("SELECT max(id) FROM traces").fetchone()[0]
        self._trace_top = max(self._trace_top, int(top or 0))
        top = cur.execute("SELECT max(seq) FROM runs").fetchone()[0]
        self._run_top = max(self._run_top, int(top or 0))
        filters = (self._trace_keys.read_on(cur), self._run_keys.read_on(cur))
        cur.close()
        return filters
