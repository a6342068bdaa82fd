"""Span batch writes: the column order the ingest path builds its tuples in."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy.engine import Connection

from collector.storage.dialect import insert_ignore_rows, insert_spans, register_resources
from collector.storage.tables import agents, spans

SPAN_COLUMNS: Final = (
    "owner",
    "trace_id",
    "span_id",
    "parent_span_id",
    "agent_id",
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "status_code",
    "status_message",
    "flags",
    "scope_name",
    "received_at",
    "grader",
    "role",
    "rule",
    "facts",
    "encoded",
    "resource_digest",
)
AGENT_COLUMNS: Final = ("id", "owner", "name", "first_seen_at")
RESOURCE_COLUMNS: Final = ("digest", "encoded", "seen_at")


def resource_digest(encoded: bytes) -> bytes:
    """The key of a resource in `resources`: 16 bytes of SHA-256 of its bytes.

    Migration 0004 computes the same in SQL (PostgreSQL's sha256()).
    """
    return hashlib.sha256(encoded).digest()[:16]


def write_batch(
    conn: Connection,
    agent_rows: Sequence[tuple[Any, ...]],
    span_rows: Sequence[tuple[Any, ...]],
    resource_rows: Sequence[tuple[Any, ...]] = (),
) -> None:
    """One group commit's rows; duplicates (exporter retries) are stored once."""
    insert_ignore_rows(conn, agents, AGENT_COLUMNS, agent_rows)
    register_resources(conn, resource_rows)
    insert_spans(conn, spans, SPAN_COLUMNS, span_rows)
