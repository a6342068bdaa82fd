"""`badge_spans_unrecognised_total{scope}` (CONVENTIONS.md section 6), counted
by the batch writer once a batch's spans have committed.

A scope name is whatever an instrumentation (or a client) chose, so a label
per name would let senders grow `/metrics` without bound: the first
`MAX_SCOPES - 1` distinct names get a label value of their own, every later
one (and a scope named "other") counts as `scope="other"`: 50 values at most.
The run's root is never unrecognised, and a span's run is not known here:
a parentless span (a root, as far as ingest can tell) is left out, so the
count matches the runs' `unrecognised_spans` for traces whose roots have no
parent.
"""

from __future__ import annotations

import threading
from collections import Counter as Tally
from collections.abc import Iterable

from prometheus_client import Counter

from collector.conventions import UNRECOGNISED
from collector.storage.rows import SpanRow

MAX_SCOPES = 50  # CONVENTIONS.md section 6: at most 50 scope label values
OTHER = "other"


class UnrecognisedSpans:
    """The counter, with the scope names it has given a label value."""

    def __init__(self, counter: Counter, max_scopes: int = MAX_SCOPES) -> None:
        self._counter = counter
        self._max = max_scopes
        self._named: set[str] = set()
        self._lock = threading.Lock()  # one writer thread today; cheap either way

    def count(self, rows: Iterable[SpanRow]) -> None:
        """Count the unrecognised spans among committed rows, by scope."""
        found = Tally(r.scope_name for r in rows if r.rule == UNRECOGNISED and r.parent_span_id)
        if not found:
            return
        with self._lock:
            for scope, spans in found.items():
                self._counter.labels(scope=self._label(scope)).inc(spans)

    def _label(self, scope: str) -> str:
        if scope in self._named:
            return scope
        if len(self._named) < self._max - 1 and scope != OTHER:
            self._named.add(scope)
            return scope
        return OTHER
