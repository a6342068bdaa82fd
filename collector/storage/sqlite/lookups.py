"""SQLite: finding trace and run numbers with part of the rows outside the
key indexes (the key tail, storage/sqlite/key_tail.py), and merging that
tail into the indexes.

Rows not merged yet are in the write transaction's memory (`KeyTxn`), or
else found by scanning them in number order through the small unmerged
index; merged rows through the partial index, whose condition each query
repeats. Keys the writer's filter says were never stored are not looked up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, TypeVar

from collector.storage.session import in_chunks
from collector.storage.sqlite.key_tail import KeyTxn
from collector.types import TraceKey

K = TypeVar("K")

# Unmerged rows are merged once there are this many of a table, or an 8th of
# its rows if more. A merge writes nearly every page of the id index (~3,100
# per million rows at 16 KiB pages, dbstat), so its cost per merged row is
# pages / rows: constant while the tail is a share of the table, but growing
# with the table under a fixed count. With a 32nd, the fixed 20,000 ruled up
# to 640k traces (5.8M bench spans) and merges went from 1.6% to 6% of the
# writer's samples between an empty store and a 3.8M-span one (py-spy, same
# payload). A reader without the writer's memory scans the tail, ~35 ns a
# row through its covering index (migration 0013): ~2.5 ms at 70k.
MERGE_MIN_ROWS: Final = 20_000
MERGE_SHARE: Final = 8


def trace_numbers(cur: Any, keys: KeyTxn | None, wanted: Iterable[TraceKey]) -> dict[TraceKey, int]:
    """The numbers (traces.id) of these (owner, trace id)s that have a row."""
    ordered = sorted(set(wanted))
    found = _remembered(ordered, keys.trace) if keys is not None else {}
    rest: dict[str, list[str]] = {}
    for key in ordered:
        if key not in found and (keys is None or keys.trace_may_be_stored(key)):
            rest.setdefault(key[0], []).append(key[1])
    for owner, trace_ids in rest.items():
        for chunk in in_chunks(trace_ids):
            sql = _by_key(keys, "trace_id, id", "traces", "owner = ? AND", "trace_id", chunk)
            cur.execute(sql, (owner, *chunk) * (1 if keys else 2))
            found.update(((owner, trace_id), int(number)) for trace_id, number in cur.fetchall())
    return found


def run_seqs(cur: Any, keys: KeyTxn | None, run_ids: Iterable[str]) -> dict[str, int]:
    """The row numbers (runs.seq) of these run ids that are stored."""
    ordered = sorted(set(run_ids))
    found = _remembered(ordered, keys.run) if keys is not None else {}
    rest = [
        run_id
        for run_id in ordered
        if run_id not in found and (keys is None or keys.run_may_be_stored(run_id))
    ]
    for chunk in in_chunks(rest):
        cur.execute(
            _by_key(keys, "id, seq", "runs", "", "id", chunk), tuple(chunk) * (1 if keys else 2)
        )
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


def _by_key(
    keys: KeyTxn | None, picked: str, table: str, owner: str, key: str, values: Sequence[str]
) -> str:
    """Rows of `table` whose `key` is one of `values` (bound after `owner`'s
    value, if any, once per part): merged rows through the index; without
    the writer's memory, also the rows not merged, scanned in number order
    through the small unmerged index."""
    marks = ", ".join(["?"] * len(values))
    merged = f"SELECT {picked} FROM {table} WHERE merged = 1 AND {owner} {key} IN ({marks})"
    if keys is not None:
        return merged
    return (
        f"{merged} UNION ALL SELECT {picked} FROM {table} INDEXED BY ix_{table}_unmerged "
        f"WHERE merged = 0 AND {owner} {key} IN ({marks})"
    )


def next_key_generation(cur: Any, keys: KeyTxn | None) -> None:
    """Unmerged rows were merged or removed: every writer's memory of them
    is read again (storage/sqlite/key_tail.py)."""
    cur.execute(
        "INSERT INTO key_merges (id, generation) VALUES (1, 1) "
        "ON CONFLICT (id) DO UPDATE SET generation = generation + 1"
    )
    if keys is not None:
        keys.reload = True


def merge_key_tails(cur: Any, keys: KeyTxn | None, force: bool) -> int:
    """Merge the rows not merged yet into the traces and runs indexes, if
    there are enough of them (or `force`). Returns how many."""
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
    next_key_generation(cur, keys)
    return sum(counts)
