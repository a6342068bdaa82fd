"""/api/v1/runs: run summaries, one run with its tool calls, the owner's trace,
a screened run's evidence (api.views.runs, api.views.evidence)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from api.deps import CallerDep, CertificateReadsDep, Cursor, PageSize, StoreDep
from api.errors import error
from api.evidence_schemas import RunEvidence
from api.schemas import RunDetail, RunList, ToolCallList, Trace
from api.views import certificates as certificate_views
from api.views import evidence as evidence_views
from api.views import runs as views

router = APIRouter(prefix="/api/v1/runs", tags=["runs"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown run")}
OWNER_ONLY: dict[int | str, dict[str, Any]] = {401: error("no key"), 403: error("not owner")}


@router.get("", response_model=RunList)
def list_runs(
    store: StoreDep,
    caller: CallerDep,
    agent_id: Annotated[str | None, Query()] = None,
    task_id: Annotated[str | None, Query()] = None,
    version: Annotated[str | None, Query(description="the agent version the runs ran")] = None,
    screening: Annotated[
        str | None, Query(description="only the runs of this screening (docs/screening.md)")
    ] = None,
    status: Annotated[str | None, Query(description="running, completed, failed, timeout")] = None,
    outcome: Annotated[
        Literal["success", "failure", "unknown"] | None,
        Query(description="success, failure, or unknown (no outcome yet)"),
    ] = None,
    page_size: PageSize = 50,
    cursor: Cursor = None,
) -> RunList:
    """Newest first by (started_at, id). With the owner's key, that owner's runs
    show their full error_class."""
    return views.list_runs(
        store,
        caller,
        agent_id=agent_id,
        task_id=task_id,
        version=version,
        screening=screening,
        status=status,
        outcome=outcome,
        page_size=page_size,
        cursor=cursor,
    )


@router.get("/{run_id}", response_model=RunDetail, responses=NOT_FOUND)
def get_run(run_id: str, store: StoreDep, caller: CallerDep) -> RunDetail:
    """The summary, its tool steps and its grade; the grade's texts and the full
    error_class with the owner's key (docs/api.md "Who may read what")."""
    return views.run_detail(store, caller, run_id)


@router.get("/{run_id}/tool-calls", response_model=ToolCallList, responses=NOT_FOUND)
def list_tool_calls(
    run_id: str, store: StoreDep, page_size: PageSize = 100, cursor: Cursor = None
) -> ToolCallList:
    """A run's tool steps in order, a page at a time."""
    return views.tool_calls(store, run_id, page_size, cursor)


@router.get(
    "/{run_id}/trace",
    response_model=Trace | list[dict[str, Any]],
    responses={**NOT_FOUND, **OWNER_ONLY},
)
def get_trace(
    run_id: str,
    store: StoreDep,
    caller: CallerDep,
    reads: CertificateReadsDep,
    canonical: Annotated[
        bool,
        Query(
            description="answer the canonical span list instead, exactly the bytes the run "
            "certificate's spans digest covers (docs/certificates.md)"
        ),
    ] = False,
) -> Trace | Response:
    """Owner only: the run's spans as a tree, each with how it was classified;
    with `canonical=true` the flat list its certificate's spans digest covers."""
    if canonical:
        body = certificate_views.canonical_trace(store, reads, caller, run_id)
        return Response(body, media_type="application/json")
    return views.trace(store, caller, run_id)


@router.get(
    "/{run_id}/evidence",
    response_model=RunEvidence,
    responses={
        404: error("unknown run, not a screened run, or its root span is gone"),
        **OWNER_ONLY,
    },
)
def get_evidence(run_id: str, store: StoreDep, caller: CallerDep) -> RunEvidence:
    """Owner only: a screened run's prompt, expected output, output, grader, score,
    HTTP status and bodies, with the words the grader found and missed."""
    return evidence_views.evidence(store, caller, run_id)
