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
(`committed`). A connection without this memory (a reader, a test) finds
unmerged rows by scanning them in number order (`dialect`), which is correct
and costs a few milliseconds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy.engine import Connection

TraceKey = tuple[str, str]

# Connection.info key under which a transaction's view is found by the
# dialect functions (storage.dialect), for the length of one transaction.
TXN_KEY: Final = "badge.recent_keys"


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

    def trace(self, key: TraceKey) -> int | None:
        found = self.added_traces.get(key)
        return found if found is not None else self.traces.get(key)

    def run(self, run_id: str) -> int | None:
        found = self.added_runs.get(run_id)  # stored again after a removal
        if found is not None or run_id in self.removed_runs:
            return found
        return self.runs.get(run_id)


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

    @contextmanager
    def transaction(self, conn: Connection) -> Iterator[KeyTxn]:
        """This write transaction's view, up to date (call it first in the
        transaction, which holds the write lock: BEGIN IMMEDIATE)."""
        with self._lock:
            self._catch_up(conn)
            txn = KeyTxn(self._traces, self._runs)
        conn.info[TXN_KEY] = txn
        try:
            yield txn
        finally:
            conn.info.pop(TXN_KEY, None)

    def committed(self, txn: KeyTxn) -> None:
        """The transaction committed: what it added is in the database."""
        with self._lock:
            if txn.reload:
                self._generation = None
                return
            self._traces.update(txn.added_traces)
            self._runs.update(txn.added_runs)
            for run_id in txn.removed_runs:
                self._runs.pop(run_id, None)
            self._trace_top = max([self._trace_top, *txn.added_traces.values()])
            self._run_top = max([self._run_top, *txn.added_runs.values()])

    def run_hint(self, run_id: str) -> int | None:
        """A run's row number if remembered (readers check it against the row)."""
        return self._runs.get(run_id)

    def _catch_up(self, conn: Connection) -> None:
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
        cur.close()


def current(conn: Connection) -> KeyTxn | None:
    """This transaction's view, if its writer keeps one."""
    found: Any = conn.info.get(TXN_KEY)
    return found if isinstance(found, KeyTxn) else None


@contextmanager
def keys_of(recent: RecentKeys | None, conn: Connection) -> Iterator[KeyTxn | None]:
    """`recent.transaction(conn)`, or no view where there is no memory."""
    if recent is None:
        yield None
        return
    with recent.transaction(conn) as txn:
        yield txn
