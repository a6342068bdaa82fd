"""/api/v1/agents: leaderboard, agent, stats, fitness, reliability, coverage, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from api.coverage_schemas import Coverage
from api.deps import (
    AgentWritesDep,
    CallerDep,
    Cursor,
    FilterDep,
    PageSize,
    StoreDep,
    WeightsDep,
)
from api.errors import error
from api.schemas import Agent, AgentList, Fitness, Reliability, Stats
from api.views import agents as views
from api.views import coverage as coverage_views

router = APIRouter(prefix="/api/v1/agents", tags=["agents"])
_AXIS = r"\s*(correctness|latency|cost|tool_efficiency|robustness)\s*"
_NUMBER = r"\s*\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
WEIGHTS_PATTERN = rf"^{_AXIS}:{_NUMBER}(,{_AXIS}:{_NUMBER})*$"
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown agent")}


@router.get("", response_model=AgentList)
def list_agents(
    store: StoreDep,
    page_size: PageSize = 50,
    cursor: Cursor = None,
    all: Annotated[bool, Query(description="also list services that ran no agent")] = False,
) -> AgentList:
    """Leaderboard: by composite (nulls last), then name. Read from the board
    the collector keeps per agent (one query whatever the number of agents);
    it follows a run change within about a second."""
    return views.board(store, everything=all, page_size=page_size, cursor=cursor)


@router.get("/{agent_id}", response_model=Agent, responses=NOT_FOUND)
def get_agent(agent_id: str, store: StoreDep) -> Agent:
    return views.agent(store, agent_id)


@router.delete(
    "/{agent_id}",
    status_code=204,
    responses={**NOT_FOUND, 401: error("no key"), 403: error("not owner")},
)
def delete_agent(
    agent_id: str, store: StoreDep, writes: AgentWritesDep, caller: CallerDep
) -> Response:
    """Owner only: the agent leaves lists; its runs stay; later spans are refused."""
    views.delete_agent(store, writes, caller, agent_id)
    return Response(status_code=204)


@router.get("/{agent_id}/stats", response_model=Stats, responses=NOT_FOUND)
def stats(agent_id: str, store: StoreDep, where: FilterDep) -> Stats:
    """The composite and its inputs (docs/scoring.md "The composite"), over the
    runs the filters keep (all of them without filters: the canonical one)."""
    return views.stats(store, agent_id, where)


@router.get(
    "/{agent_id}/fitness",
    response_model=Fitness,
    responses={**NOT_FOUND, 422: error("bad weights, or another malformed parameter")},
)
def fitness(
    agent_id: str,
    store: StoreDep,
    where: FilterDep,
    caller: CallerDep,
    saved: WeightsDep,
    weights: Annotated[
        str | None,
        Query(
            description="e.g. correctness:2,latency:1 (unnamed axes get 0; each axis once; "
            "finite, non-negative numbers)",
            max_length=500,
            # Documented, not enforced: the parser's message ("unknown axis
            # 'speed'") says more than a failed regular expression.
            json_schema_extra={"pattern": WEIGHTS_PATTERN},
        ),
    ] = None,
) -> Fitness:
    """The five-axis radar over the latest 100 terminal runs (docs/scoring.md).

    Without `weights`, the caller's saved weights apply (PUT /me/radar-weights).
    """
    return views.fitness(store, saved, caller, agent_id, where, weights)


@router.get("/{agent_id}/reliability", response_model=Reliability, responses=NOT_FOUND)
def reliability(agent_id: str, store: StoreDep, where: FilterDep) -> Reliability:
    """pass^k per qualifying task and their mean (docs/scoring.md "pass^k")."""
    return views.reliability(store, agent_id, where)


@router.get(
    "/{agent_id}/coverage",
    response_model=Coverage,
    responses={**NOT_FOUND, 401: error("no key"), 403: error("not owner")},
)
def coverage(agent_id: str, store: StoreDep, caller: CallerDep) -> Coverage:
    """Owner only, like a run's trace: of the spans of the agent's newest 1,000
    runs, which no convention recognised, by instrumentation scope and role,
    the conventions that recognised the rest, and the 20 most frequent
    unrecognised (scope, span name) pairs with a run that has each
    (docs/conventions.md "Coverage")."""
    return coverage_views.coverage(store, caller, agent_id)
