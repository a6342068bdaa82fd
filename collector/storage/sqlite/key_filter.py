"""A set of keys that answers "certainly never added" or "maybe added".

Why: each new trace and each new run was looked up in its random-keyed
index (storage/sqlite/key_tail.py) before being written, and almost every such
lookup finds nothing. In a store of millions of spans those indexes no longer
fit the CPU caches, so each miss cost a walk of cold B-tree pages, the part
of the writer that grew most with the store (perf: the index search went
from 1.6% to 7.2% of the writer's samples between an empty store and a
4.6M-span one). A key this filter has never seen is skipped without a query.

A Bloom filter in blocks of one 64-bit word: a key sets 4 bits of one word
chosen by its hash, so adding or testing reads one word per part, and a part
costs 2 bytes per key it holds. A full part takes a key never added for one
added about once in 190 (measured: tests/collector/test_key_filter.py); that
key is then looked up as before. When a part is full a part four times as
large is started, so the filter grows with the store without ever reading
the keys again. Keys are never removed: a removed key only costs a lookup.
Python's `hash` (of strings, and tuples of them) is fixed within a process,
which is all a filter held in one process's memory needs.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Iterable
from typing import Final

BITS_PER_KEY: Final = 16  # per key a part holds when full; 4 of them set
FIRST_PART_KEYS: Final = 65_536  # 128 KiB
GROWTH: Final = 4  # each part holds this many times the keys of the last
_MASK64: Final = (1 << 64) - 1


def _bits(h: int) -> int:
    return (
        (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63)) | (1 << ((h >> 18) & 63))
    )


class KeyFilter:
    """Every key added is `in` it; a key never added almost never is."""

    def __init__(self, first_part_keys: int = FIRST_PART_KEYS) -> None:
        self._parts: list[array[int]] = []
        self._part_keys = 0
        self._held = 0  # keys added to the newest part
        self._start_part(max(first_part_keys, 64))

    def add(self, key: Hashable) -> None:
        self.update((key,))

    def update(self, keys: Iterable[Hashable]) -> None:
        # One loop with its state in locals: 600,000 run ids in 0.75 s (median
        # of 7), 0.88 s through a method call per key. Inlining `_bits` saved
        # another 3%, not worth a second copy of it.
        words, held, room = self._parts[-1], self._held, self._part_keys
        size = len(words)
        for key in keys:
            if held >= room:
                self._start_part(room * GROWTH)
                words, held, room = self._parts[-1], 0, self._part_keys
                size = len(words)
            h = hash(key) & _MASK64
            words[(h >> 24) % size] |= _bits(h)
            held += 1
        self._held = held

    def __contains__(self, key: Hashable) -> bool:
        h = hash(key) & _MASK64
        bits = _bits(h)
        for words in self._parts:
            if words[(h >> 24) % len(words)] & bits == bits:
                return True
        return False

    def _start_part(self, keys: int) -> None:
        self._parts.append(array("Q", bytes(8 * (keys * BITS_PER_KEY // 64))))
        self._part_keys = keys
        self._held = 0
