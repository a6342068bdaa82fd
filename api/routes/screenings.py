"""/api/v1/agents/{id}/screenings: what a screening found, task by task, and
POST /api/v1/screenings: a screener's plan (api.views.screenings; docs/screening.md).

A screening id is whatever a grader's runs named, `/`, `%`, spaces and any
Unicode included (issue 42 item 16): the route takes the rest of the path,
percent-decoded, so every stored screening can be opened by its own id.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response

from api.deps import CallerDep, Cursor, PageSize, PlansDep, StoreDep
from api.errors import error
from api.json_bodies import KeyFirstRoute, bound
from api.ports import PlanInput
from api.screening_schemas import PlanAccepted, PlanBody, ScreeningDetail, ScreeningList
from api.views import screenings as views

router = APIRouter(prefix="/api/v1", tags=["screenings"], route_class=KeyFirstRoute)
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown agent or screening")}
# 10,000 task ids of 256 characters, each as JSON may escape it: past 16 MiB
# no body is a valid plan (api.screening_schemas.PlanBody).
MAX_PLAN_BYTES = 16 << 20
RETRY_AFTER = {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}}
PLAN_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": PlanAccepted, "description": "resumed: what is left to dispatch"},
    401: error("no key, or an unknown or revoked one"),
    403: error("the key is not a grader key"),
    409: error(
        "the screening exists (a plan or a run names it) and `resume` is false, or it is "
        "resumed with another suite digest, rounds, version or tasks"
    ),
    413: error(f"body over {MAX_PLAN_BYTES} bytes"),
    503: error("the collector cannot store it now; retry") | {"headers": RETRY_AFTER},
}


@router.get("/agents/{agent_id}/screenings", response_model=ScreeningList, responses=NOT_FOUND)
def list_screenings(
    agent_id: str, store: StoreDep, page_size: PageSize = 50, cursor: Cursor = None
) -> ScreeningList:
    """The agent's screenings, newest first by their first run."""
    return views.list_screenings(store, agent_id, page_size, cursor)


@router.get(
    "/agents/{agent_id}/screenings/{screening_id:path}",
    response_model=ScreeningDetail,
    responses=NOT_FOUND,
)
def get_screening(
    agent_id: str, screening_id: str, store: StoreDep, caller: CallerDep
) -> ScreeningDetail:
    """One screening: its tasks by round, pass^k and radar over its runs, and whether
    every planned dispatch has its run. The id is percent-encoded, `/` as `%2F`.

    Error classes beyond the fixed list read `other` without the owner's key."""
    return views.screening(store, caller, agent_id, screening_id)


@router.post(
    "/screenings",
    status_code=201,
    response_model=PlanAccepted,
    responses=PLAN_RESPONSES,
    openapi_extra=bound(MAX_PLAN_BYTES),
)
def post_plan(
    caller: CallerDep, plans: PlansDep, body: Annotated[PlanBody, Body()], response: Response
) -> PlanAccepted:
    """A grader key records what a screening is about to dispatch, before it does:
    the screening then shows itself incomplete until every dispatch has its run.
    201 for a new screening; with `resume`, 200 and what is missing."""
    plan = PlanInput(
        agent=body.agent,
        screening_id=body.screening_id,
        suite_name=body.suite_name,
        suite_digest=body.suite_digest,
        version=body.version,
        rounds=body.rounds,
        tasks=tuple(body.tasks),
        resume=body.resume,
    )
    accepted = views.record_plan(plans, caller, plan)
    if not accepted.created:
        response.status_code = 200
    return accepted
