"""The rows the hot paths write, named: one field per table column, in order.

NamedTuples, not dataclasses: they are the tuples the DB-API binds as they
are (no per-row conversion), and fields read by name everywhere else.
tests/collector/test_rows.py checks the fields equal the tables' columns.
Only `storage.dialect` binds them positionally.

A NamedTuple pickles through its Python-level __new__ (one call per row,
and decoder processes send ~30,000 rows a second); `__reduce__` rebuilds it
with the C-level tuple constructor instead.
"""

from __future__ import annotations

from typing import Any, NamedTuple


def _rebuild(cls: type[Any], values: tuple[Any, ...]) -> Any:
    return tuple.__new__(cls, values)


class SpanRow(NamedTuple):
    """A `spans` row as the ingest path builds it (`id` and `trace_ref` are
    the database's: a row id, and the trace's number looked up on insert)."""

    owner: str
    trace_id: str
    span_id: str
    parent_span_id: str
    agent_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    flags: int
    scope_name: str
    received_at: float
    grader: bool
    role: str
    rule: str
    facts: str
    encoded: bytes
    resource_digest: bytes

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (SpanRow, tuple(self))


class RunRow(NamedTuple):
    """A `runs` row."""

    id: str
    owner: str
    agent_id: str
    trace_id: str
    run_key: str
    root_span_id: str | None
    task_id: str | None
    status: str
    success: bool | None
    success_source: str | None
    started_ns: int
    ended_ns: int
    latency_ms: float | None
    steps: int | None
    tool_errors: int
    llm_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    error_class: str
    span_count: int
    has_agent_span: bool
    last_received_at: float
    check_at: float | None
    terminal_at: float | None
    tool_calls: str
    updated_at: float

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (RunRow, tuple(self))


class AgentRow(NamedTuple):
    """An `agents` row as ingest registers a new agent."""

    id: str
    owner: str
    name: str
    first_seen_at: float


class ResourceRow(NamedTuple):
    """A `resources` row: one distinct resource."""

    digest: bytes
    encoded: bytes
    seen_at: float


SPAN_COLUMNS = SpanRow._fields
RUN_COLUMNS = RunRow._fields
AGENT_COLUMNS = AgentRow._fields
RESOURCE_COLUMNS = ResourceRow._fields
