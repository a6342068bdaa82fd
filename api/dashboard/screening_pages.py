"""An agent's screenings and one screening's page (SCREEN.md section 7, docs/dashboard.md).

The numbers are `GET /api/v1/agents/{id}/screenings/{screening_id}`'s, from
the same view functions (api.views.screenings); the grid adds, per task and round, the run behind
the outcome (its page is one click away) and its error class, redacted as
the API redacts it for a caller without the owner's key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from api.dashboard.charts import AXES, radar_shape
from api.dashboard.pages import page
from api.deps import CallerDep, Cursor, StoreDep
from api.ports import ScreenedRun, ScreeningInfo
from api.screening_schemas import ScreeningItem
from api.views import agents as agent_views
from api.views import screenings as screening_views
from scoring import policy

router = APIRouter(include_in_schema=False)
CELLS_PER_PAGE = 1200  # grid cells on one page (tasks x rounds): pages stay small
SCREENINGS_PER_PAGE = 50


@dataclass(frozen=True, slots=True)
class Cell:
    """One task's round: its run, and `pass`, `fail`, the error class, or why there is none."""

    run_id: str | None
    text: str
    kind: str  # pass, fail, error, pending or missing (the cell's style)


@dataclass(frozen=True, slots=True)
class Sibling:
    """Another screening of the same suite, and the address comparing the two."""

    info: ScreeningItem
    href: str


def cell_of(run: ScreenedRun | None) -> Cell:
    """The error class when the dispatch failed, else the outcome (SCREEN.md section 7)."""
    if run is None:
        return Cell(None, "–", "missing")
    if run.error_class != "none":
        return Cell(run.record.id, run.error_class, "error")
    if run.record.success is None:
        return Cell(run.record.id, "pending", "pending")
    outcome = "pass" if run.record.success else "fail"
    return Cell(run.record.id, outcome, outcome)


def tasks_per_page(rounds: int) -> int:
    return max(10, min(100, CELLS_PER_PAGE // max(rounds, 1)))


def siblings_of(agent_id: str, info: ScreeningInfo, every: list[ScreeningInfo]) -> list[Sibling]:
    """The agent's other screenings of this suite (same digest), newest first, each with
    the compare of the older (before) and the newer (after)."""
    if info.suite_digest is None:
        return []
    found = []
    for other in every:
        if other.suite_digest != info.suite_digest or other.screening_id == info.screening_id:
            continue
        older, newer = sorted((other, info), key=lambda s: (_started(s), s.screening_id))
        query = {"base_screening": older.screening_id, "head_screening": newer.screening_id}
        href = f"/agents/{agent_id}/compare?{urlencode(query)}"
        found.append(Sibling(screening_views.screening_item(other), href))
    return found


def _started(info: ScreeningInfo) -> float:
    """When a screening started: its first run, else (none yet) when it was planned."""
    return info.first_run_at if info.first_run_at is not None else info.planned_at or 0.0


@router.get("/agents/{agent_id}/screenings", response_class=HTMLResponse)
def screenings_page(agent_id: str, store: StoreDep, cursor: Cursor = None) -> HTMLResponse:
    """Every screening of the agent, newest first, fifty to a page."""
    agent = agent_views.agent(store, agent_id)
    listed = screening_views.list_screenings(
        store, agent.id, page_size=SCREENINGS_PER_PAGE, cursor=cursor or None
    )
    return page(
        "screenings.html",
        title=f"Screenings of {agent.name}",
        agent=agent,
        screenings=listed.items,
        next_cursor=listed.next_cursor,
        first_page=not cursor,
    )


@router.get("/agents/{agent_id}/screenings/{screening_id:path}", response_class=HTMLResponse)
def screening_page(
    agent_id: str,
    screening_id: str,
    store: StoreDep,
    caller: CallerDep,
    number: Annotated[int, Query(alias="page", ge=1, le=100_000)] = 1,
) -> HTMLResponse:
    """The grid of tasks by rounds (a planned dispatch without a run is an empty cell),
    pass^k, the radar and the compares with its siblings. The id is the rest of the path,
    percent-decoded: any id a grader's runs named opens (issue 42 item 16)."""
    agent = agent_views.find_agent(store, agent_id)
    info, screened = screening_views.screening_view(store, agent, screening_id, caller)
    planned = store.planned_tasks(agent.id, screening_id)
    detail = screening_views.screening_detail(info, screened, planned)
    rounds = screening_views.shown_rounds(info)
    size = tasks_per_page(rounds)
    by_task = screening_views.tasks_by_id(screened)
    shown = detail.tasks[(number - 1) * size : number * size]
    rows = [
        (
            task,
            [
                cell_of(run)
                for run in screening_views.by_round(by_task.get(task.task_id, []), rounds)
            ],
        )
        for task in shown
    ]
    values = {axis: getattr(detail.radar, axis) for axis in AXES}
    pages = max(1, -(-len(detail.tasks) // size))
    # pass^k's tasks (at least PASS_K_MIN_OUTCOMES known outcomes) and those short of k = 5
    known = [sum(o is not None for o in task.outcomes) for task in detail.tasks]
    counted = [n for n in known if n >= policy.PASS_K_MIN_OUTCOMES]
    return page(
        "screening.html",
        title=f"Screening {info.screening_id}",
        agent=agent,
        screening=detail,
        rows=rows,
        rounds=range(1, rounds + 1),
        shape=radar_shape(values, {}),
        siblings=siblings_of(agent.id, info, store.screenings(agent.id)),
        number=number,
        pages=pages,
        first_task=(number - 1) * size + 1,
        counted_for_pass_k=len(counted),
        short_for_top_k=sum(1 for n in counted if n < max(policy.PASS_K_LEVELS)),
    )
