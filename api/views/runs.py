"""Run summaries, one run with its tool calls and grade, and the owner's trace.

Summaries and details are public, as api.visibility shows them to the caller:
the text a span or a grader wrote needs the owner's key, as the trace does.
"""

from __future__ import annotations

from api.auth import Caller
from api.ports import ReadStore, RunInfo
from api.problems import NotFound
from api.render import (
    STATUS_NAMES,
    encode_cursor,
    page_offset,
    rfc3339,
    run_position,
    run_summary,
    trace_tree,
)
from api.schemas import Grade, RunDetail, RunList, ToolCall, ToolCallList, Trace
from api.visibility import shown_to

DETAIL_TOOL_CALLS = 100  # tool steps in a run's detail; the rest are paged
MAX_TRACE_SPANS = 10_000


def find_run(store: ReadStore, run_id: str) -> RunInfo:
    run = store.run(run_id)
    if run is None:
        raise NotFound("unknown run")
    return run


def list_runs(
    store: ReadStore,
    caller: Caller,
    *,
    agent_id: str | None = None,
    task_id: str | None = None,
    version: str | None = None,
    screening: str | None = None,
    status: str | None = None,
    outcome: str | None = None,
    page_size: int = 50,
    cursor: str | None = None,
) -> RunList:
    """Newest first by (started_at, id). With the owner's key, that owner's runs
    show their full error_class."""
    before = run_position(cursor) if cursor else None
    rows = store.runs(
        agent_id=agent_id,
        task_id=task_id,
        status=status,
        version=version,
        outcome=outcome,
        screening=screening,
        before=before,
        limit=page_size + 1,
    )
    page = rows[:page_size]
    next_cursor = None
    if len(rows) > page_size:
        last, started_ns = page[-1]
        next_cursor = encode_cursor(f"{started_ns}:{last.id}")
    return RunList(
        items=[run_summary(*shown_to(caller, run)) for run, _ in page], next_cursor=next_cursor
    )


def run_detail(store: ReadStore, caller: Caller, run_id: str) -> RunDetail:
    """The summary, its first tool steps and its grade; the grade's texts and the
    full error_class with the owner's key (docs/api.md "Who may read what")."""
    run, owner_view = shown_to(caller, find_run(store, run_id))
    summary = run_summary(run, owner_view)
    shown, next_cursor = _tool_page(run, 0, DETAIL_TOOL_CALLS)
    return RunDetail(
        **summary.model_dump(),
        tool_calls=shown,
        tool_calls_next_cursor=next_cursor,
        grade=_grade(run),
    )


def tool_calls(store: ReadStore, run_id: str, page_size: int, cursor: str | None) -> ToolCallList:
    """A run's tool steps in order, a page at a time."""
    run = find_run(store, run_id)
    start = page_offset(cursor) if cursor else 0
    items, next_cursor = _tool_page(run, start, page_size)
    return ToolCallList(items=items, next_cursor=next_cursor)


def _tool_page(run: RunInfo, start: int, size: int) -> tuple[list[ToolCall], str | None]:
    calls = run.tool_calls[start : start + size]
    more = start + size < len(run.tool_calls)
    items = [
        ToolCall(
            name=call.name,
            span_id=call.span_id,
            started_at=rfc3339(call.start_ns / 1e9) or "",
            duration_ms=(call.end_ns - call.start_ns) / 1e6,
            status=STATUS_NAMES.get(call.status_code, "unset"),
        )
        for call in calls
    ]
    return items, encode_cursor(str(start + size)) if more else None


def _grade(run: RunInfo) -> Grade | None:
    grade = run.grade
    if grade is None:
        return None
    return Grade(
        success=grade.success,
        score=grade.score,
        expected_output=grade.expected_output,
        output=grade.output,
        error_class=grade.error_class,
        graded_at=rfc3339(grade.graded_at) or "",
    )


def trace(store: ReadStore, caller: Caller, run_id: str) -> Trace:
    """Owner only: the run's spans as a tree, each with how it was classified."""
    run = find_run(store, run_id)
    caller.require_reader(run.owner)
    view = store.trace(run, MAX_TRACE_SPANS)
    return Trace(
        run_id=run.id, trace_id=run.trace_id, spans=trace_tree(view.spans), truncated=view.truncated
    )
