"""Recently committed span facts per trace, so assembly rarely reads them back.

An entry starts from a database load and is then extended with the rows the
batch writer commits. It is only trusted when its span count equals the
database's count for that trace (checked inside the transaction that stores
the runs); otherwise it is dropped and the trace is loaded again. Bounded by
the number of spans held.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from collector.assembly.facts import SpanFacts
from collector.storage.run_writes import FACT_COLUMNS, to_span_facts
from collector.storage.writes import SPAN_COLUMNS

TraceKey = tuple[str, str]
_I = {name: SPAN_COLUMNS.index(name) for name in SPAN_COLUMNS}
_FACT_INDEXES = [_I[name] for name in FACT_COLUMNS[1:]]


def facts_from_row(row: tuple[Any, ...]) -> SpanFacts:
    """A committed span row (SPAN_COLUMNS order) -> SpanFacts, via the one converter."""
    return to_span_facts([row[i] for i in _FACT_INDEXES])


class TraceCache:
    def __init__(self, max_spans: int = 200_000) -> None:
        self._max_spans = max_spans
        self._spans = 0
        self._traces: OrderedDict[TraceKey, dict[str, SpanFacts]] = OrderedDict()
        self._lock = threading.Lock()

    def add_rows(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Extend traces held completely; rows of other traces are not cached.

        A trace first seen here may have older spans stored (a trace whose
        runs were stored straight from its first request, another process,
        an eviction); it is loaded from the database when it is next needed.
        """
        owner_i, trace_i, span_i = _I["owner"], _I["trace_id"], _I["span_id"]
        with self._lock:
            for row in rows:
                spans = self._traces.get((row[owner_i], row[trace_i]))
                if spans is not None and row[span_i] not in spans:
                    spans[row[span_i]] = facts_from_row(row)
                    self._spans += 1
            while self._spans > self._max_spans and self._traces:
                _, evicted = self._traces.popitem(last=False)
                self._spans -= len(evicted)

    def get(self, key: TraceKey) -> list[SpanFacts] | None:
        with self._lock:
            spans = self._traces.get(key)
            return list(spans.values()) if spans is not None else None

    def put(self, key: TraceKey, facts: list[SpanFacts]) -> None:
        """Remember a trace loaded from the database (it is complete as of now)."""
        with self._lock:
            old = self._traces.pop(key, None)
            self._spans -= len(old) if old else 0
            self._traces[key] = {f.span_id: f for f in facts}
            self._spans += len(facts)

    def drop(self, key: TraceKey) -> None:
        with self._lock:
            old = self._traces.pop(key, None)
            self._spans -= len(old) if old else 0
