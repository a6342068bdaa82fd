"""The rows the hot paths write, named: one field per table column, in order.

NamedTuples, not dataclasses: they are the tuples the DB-API binds as they
are (no per-row conversion), and fields read by name everywhere else.
tests/collector/test_rows.py checks the fields equal the tables' columns.
Only the backends' sessions (storage/sqlite, storage/postgresql) bind them positionally.

A NamedTuple's own constructor and its pickling are Python-level calls,
~0.4 and ~1.3 us a row, where the decoders build and send ~30,000 rows a
second: `span_row`/`run_row_of` build one from a plain tuple with the C-level
tuple constructor (~0.14 us), and the decoder ships plain tuples across the
process boundary (collector.ingest.decoding.DecodedRows).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, NamedTuple, TypeVar

Row = TypeVar("Row", bound=tuple[Any, ...])


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
    key_id: int | None  # keys.id of the key that sent it (None: keyless, --insecure)


class RunRow(NamedTuple):
    """A `runs` row: THE run record. Its fields are the table's columns (with
    their SQL kind in RUN_KINDS, nullable where the field may be None), the
    assembled run's fields (collector.assembly.runs.Run, named alike) and,
    through api.ports.RunInfo, the API's run summary; tests keep them in step
    (tests/collector/test_run_record.py). Adding a run field: a line here and
    in RUN_KINDS, the assembly that computes it, and a line of RunInfo and of
    the summary schema."""

    id: str
    owner: str
    agent_id: str
    trace_id: str
    run_key: str
    root_span_id: str | None
    task_id: str | None
    version: str | None
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
    tool_calls: str  # JSON
    updated_at: float
    evaluation: str | None  # JSON {score, output, at} (docs/loop.md "Graded outcomes")
    screening_id: str | None  # the root's badge.screening.* (docs/screening.md)
    screening_round: int | None
    suite_name: str | None
    suite_digest: str | None
    # A span from a grader key claims the run (docs/runs.md "Runs a grader
    # recorded"): its key and its screening are the grader's.
    grader_claim: bool
    # CONVENTIONS.md section 6: `other` spans no convention recognised, the
    # root excepted; and the conventions digest the run was classified under
    # (section 4). Both null for runs stored before migration 0023.
    unrecognised_spans: int | None
    conventions_digest: str | None
    # docs/runs.md: where `steps` came from, `spans` or `requested` (the tool
    # calls its LLM calls requested, in a run with no tool span); null when
    # steps is, and for runs stored before migration 0024.
    steps_source: str | None


# Each run column's SQL kind (storage.tables turns them into types); nullability
# comes from RunRow's annotations.
RUN_KINDS: dict[str, str] = {
    "id": "uuid",
    "owner": "owner",
    "agent_id": "uuid",
    "trace_id": "trace_id",
    "run_key": "text",
    "root_span_id": "span_id",
    "task_id": "text",
    "version": "text",
    "status": "word",
    "success": "bool",
    "success_source": "word",
    "started_ns": "int64",
    "ended_ns": "int64",
    "latency_ms": "float",
    "steps": "int",
    "tool_errors": "int",
    "llm_calls": "int",
    "input_tokens": "int64",
    "output_tokens": "int64",
    "cost_usd": "float",
    "cost_source": "word",
    "error_class": "text",
    "span_count": "int",
    "has_agent_span": "bool",
    "last_received_at": "float",
    "check_at": "float",
    "terminal_at": "float",
    "tool_calls": "text",
    "updated_at": "float",
    "evaluation": "text",
    "screening_id": "text",
    "screening_round": "int",
    "suite_name": "text",
    "suite_digest": "text",
    "grader_claim": "bool",
    "unrecognised_spans": "int",
    "conventions_digest": "word",
    "steps_source": "word",
}


class AgentRow(NamedTuple):
    """An `agents` row as ingest registers a new agent."""

    id: str
    owner: str
    name: str
    first_seen_at: float


class GradeRow(NamedTuple):
    """A `grades` row: one posted grade, under one run id it names."""

    run_id: str
    owner: str
    agent: str
    run_key: str
    success: bool
    score: float | None
    expected_output: str | None
    output: str | None
    error_class: str | None
    graded_at: float
    waiting_bytes: int = 0  # set by storage.grades: counted while the run is not stored


class ResourceRow(NamedTuple):
    """A `resources` row: one distinct resource."""

    digest: bytes
    encoded: bytes
    seen_at: float


def resource_digest(encoded: bytes) -> bytes:
    """The key of a resource in `resources`: 16 bytes of SHA-256 of its bytes.

    Migration 0004 computes the same in SQL (PostgreSQL's sha256()).
    """
    return hashlib.sha256(encoded).digest()[:16]


SPAN_COLUMNS = SpanRow._fields
RUN_COLUMNS = RunRow._fields
AGENT_COLUMNS = AgentRow._fields
RESOURCE_COLUMNS = ResourceRow._fields
GRADE_COLUMNS = GradeRow._fields

# plain tuple in column order -> the named row, without a Python-level call
span_row: Callable[[tuple[Any, ...]], SpanRow] = partial(tuple.__new__, SpanRow)
run_row_of: Callable[[tuple[Any, ...]], RunRow] = partial(tuple.__new__, RunRow)


def row_builder(row: type[Row], parameters: str, values: Mapping[str, str]) -> Callable[..., Row]:
    """A function of `parameters` that builds a `row` (a NamedTuple) from a
    value named for each of its fields: `values` maps every field to a
    Python expression over the parameters. The fields' order stays the
    row's own, written once in its class; a field without a value, or a
    value for no field, fails here, at import.

    Made once, as namedtuple makes its own constructor: keyword arguments
    cost ~0.1 us each per call, a 21-field row ~2.5 us, where this builds
    the tuple in one C call (bench/ingest.py --stages, "rows").
    """
    fields: tuple[str, ...] = getattr(row, "_fields", ())
    if set(fields) != set(values):
        unnamed, unknown = set(fields) - set(values), set(values) - set(fields)
        raise TypeError(f"{row.__name__}: no value for {unnamed or '-'}, no field {unknown or '-'}")
    items = "".join(f"{values[name]}, " for name in fields)
    scope: dict[str, Any] = {"_new": tuple.__new__, "_row": row}
    exec(f"def build({parameters}):\n    return _new(_row, ({items}))\n", scope)
    built: Callable[..., Row] = scope["build"]
    built.__qualname__ = built.__name__ = f"build_{row.__name__}"
    return built


def plain_rows(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Named rows as plain tuples, to pickle (`span_rows`/`run_rows` name them again)."""
    return list(map(tuple, rows))


def span_rows(values: Iterable[tuple[Any, ...]]) -> list[SpanRow]:
    return list(map(span_row, values))


def run_rows(values: Iterable[tuple[Any, ...]]) -> list[RunRow]:
    return list(map(run_row_of, values))
