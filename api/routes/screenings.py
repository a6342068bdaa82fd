"""/api/v1/agents/{id}/screenings: what a screening found, task by task
(api.views.screenings; docs/screening.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from api.deps import CallerDep, Cursor, PageSize, StoreDep
from api.errors import error
from api.screening_schemas import ScreeningDetail, ScreeningList
from api.views import screenings as views

router = APIRouter(prefix="/api/v1/agents", tags=["screenings"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown agent or screening")}
ScreeningId = Annotated[str, Path(max_length=64)]


@router.get("/{agent_id}/screenings", response_model=ScreeningList, responses=NOT_FOUND)
def list_screenings(
    agent_id: str, store: StoreDep, page_size: PageSize = 50, cursor: Cursor = None
) -> ScreeningList:
    """The agent's screenings, newest first by their first run."""
    return views.list_screenings(store, agent_id, page_size, cursor)


@router.get(
    "/{agent_id}/screenings/{screening_id}", response_model=ScreeningDetail, responses=NOT_FOUND
)
def get_screening(
    agent_id: str, screening_id: ScreeningId, store: StoreDep, caller: CallerDep
) -> ScreeningDetail:
    """One screening: its tasks by round, pass^k and radar over its runs.

    Error classes beyond the fixed list read `other` without the owner's key."""
    return views.screening(store, caller, agent_id, screening_id)
