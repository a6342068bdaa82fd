"""Names the collector's parts share, defined once (imports none of its layers)."""

from __future__ import annotations

from collections.abc import Callable

# A trace within its owner: span identity is (owner, trace_id, span_id).
TraceKey = tuple[str, str]
# The collector's clock (epoch seconds), injected so tests control timers.
Clock = Callable[[], float]
