"""A `spans` row built from a decoded span, field by field by name.

The field order is `rows.SpanRow`'s, defined there once; this module only
says which value goes to which column, so a new column is one line in each
and no positional tuple has to stay in step with `WireSpan` or the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from collector.conventions import Recognition
from collector.storage.rows import SpanRow, row_builder
from proto import WireSpan


@dataclass(frozen=True, slots=True)
class Sender:
    """What every span of one request shares: who sent it, and when."""

    owner: str
    grader: bool  # sent with a grader key (docs/runs.md "Runs a grader recorded")
    received_at: float
    key_id: int | None  # keys.id of the sending key (None: keyless, --insecure)


# Each column's value, by name, from the builder's parameters; the columns'
# order is SpanRow's (storage.rows.row_builder).
span_row_for: Callable[[WireSpan, Sender, str, bytes, Recognition, str], SpanRow] = row_builder(
    SpanRow,
    "span, sender, agent_id, resource_digest, recognition, facts",
    {
        "owner": "sender.owner",
        "trace_id": "span.trace_id",
        "span_id": "span.span_id",
        "parent_span_id": "span.parent_span_id",
        "agent_id": "agent_id",
        "name": "span.name",
        "kind": "span.kind",
        "start_ns": "span.start_ns",
        "end_ns": "span.end_ns",
        "status_code": "span.status_code",
        "status_message": "span.status_message",
        "flags": "span.flags",
        "scope_name": "span.scope_name",
        "received_at": "sender.received_at",
        "grader": "sender.grader",
        "role": "recognition.role",
        "rule": "recognition.label",
        "facts": "facts",
        "encoded": "span.encoded",
        "resource_digest": "resource_digest",
        "key_id": "sender.key_id",
    },
)
"""The row that stores `span`: its wire fields, who sent it, the agent and
resource it belongs to, and what recognition said of it (`facts`: the
encoded facts text)."""
