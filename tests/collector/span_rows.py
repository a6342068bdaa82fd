"""Span storage rows for storage tests: only what a test names, the rest neutral."""

from __future__ import annotations

from collector.storage.rows import SPAN_COLUMNS, SpanRow

_NUMBERS = frozenset({"kind", "start_ns", "end_ns", "status_code", "flags", "received_at"})


def span_row(trace_id: str, span_id: str, **values: object) -> SpanRow:
    """A span row for owner "o"; `values` overrides any column."""
    row: dict[str, object] = {"owner": "o", "trace_id": trace_id, "span_id": span_id}
    row |= {"grader": False, "facts": "{}", "encoded": b"", "resource_digest": b"", "key_id": None}
    row |= values
    return SpanRow(*(row.get(c, 0 if c in _NUMBERS else "") for c in SPAN_COLUMNS))  # type: ignore[arg-type]
