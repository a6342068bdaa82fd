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

from collector.assembly.facts import SpanFacts
from collector.storage.rows import SpanRow
from collector.storage.trace_spans import fact_values, to_span_facts
from collector.types import TraceKey


def facts_from_row(row: SpanRow) -> SpanFacts:
    """A committed span row -> SpanFacts, via the one converter."""
    return to_span_facts(fact_values(row))


class TraceCache:
    def __init__(self, max_spans: int = 200_000) -> None:
        self.max_spans = max_spans
        self._spans = 0
        self._traces: OrderedDict[TraceKey, dict[str, SpanFacts]] = OrderedDict()
        self._lock = threading.Lock()

    def add_rows(self, rows: Iterable[SpanRow]) -> None:
        """Extend traces held completely; rows of other traces are not cached.

        A trace first seen here may have older spans stored (a trace whose
        runs were stored straight from its first request, another process,
        an eviction); it is loaded from the database when it is next needed.
        """
        with self._lock:
            for row in rows:
                spans = self._traces.get((row.owner, row.trace_id))
                if spans is None:
                    continue
                held = spans.get(row.span_id)
                if held is None:
                    spans[row.span_id] = facts_from_row(row)
                    self._spans += 1
                elif row.grader and not held.grader:  # as stored: storage.span_identity
                    spans[row.span_id] = facts_from_row(row)
            while self._spans > self.max_spans and self._traces:
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
