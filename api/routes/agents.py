"""/api/v1/agents: leaderboard, agent, stats, fitness, reliability, delete."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Response

import scoring
from api.deps import CallerDep, Cursor, FilterDep, PageSize, StoreDep, WeightsDep
from api.errors import error
from api.ports import AgentInfo, ReadStore, RunCounts
from api.render import encode_cursor, page_offset, rfc3339
from api.schemas import (
    Agent,
    AgentList,
    AgentListItem,
    Fitness,
    Reliability,
    Stats,
    TaskReliability,
)
from scoring.policy import SCORING_POLICY

router = APIRouter(prefix="/api/v1/agents", tags=["agents"])
_AXIS = r"\s*(correctness|latency|cost|tool_efficiency|robustness)\s*"
_NUMBER = r"\s*\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
WEIGHTS_PATTERN = rf"^{_AXIS}:{_NUMBER}(,{_AXIS}:{_NUMBER})*$"
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown agent")}


def find_agent(store: ReadStore, agent_id: str) -> AgentInfo:
    """A malformed id is a 404 like an unknown one (docs/api.md)."""
    try:
        uuid.UUID(agent_id)
    except ValueError:
        raise HTTPException(404, "unknown agent") from None
    agent = store.agent(agent_id)
    if agent is None:
        raise HTTPException(404, "unknown agent")
    return agent


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
    start = page_offset(cursor) if cursor else 0
    page, total = store.board(everything=all, weights=None, offset=start, limit=page_size)
    return AgentList(
        items=[
            AgentListItem(
                id=row.agent_id,
                owner=row.owner,
                name=row.name,
                composite_score=row.composite_score,
                total_runs=row.total_runs,
                last_run_at=rfc3339(row.last_run_at),
            )
            for row in page
        ],
        next_cursor=encode_cursor(str(start + page_size)) if start + page_size < total else None,
    )


@router.get("/{agent_id}", response_model=Agent, responses=NOT_FOUND)
def get_agent(agent_id: str, store: StoreDep) -> Agent:
    agent = find_agent(store, agent_id)
    return Agent(
        id=agent.id,
        owner=agent.owner,
        name=agent.name,
        first_seen_at=rfc3339(agent.first_seen_at) or "",
        last_run_at=rfc3339(agent.last_run_at),
    )


@router.delete(
    "/{agent_id}",
    status_code=204,
    responses={**NOT_FOUND, 401: error("no key"), 403: error("not owner")},
)
def delete_agent(agent_id: str, store: StoreDep, caller: CallerDep) -> Response:
    """Owner only: the agent leaves lists; its runs stay; later spans are refused."""
    agent = find_agent(store, agent_id)
    caller.require_owner(agent.owner)
    store.delete_agent(agent.id)
    return Response(status_code=204)


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


@router.get("/{agent_id}/stats", response_model=Stats, responses=NOT_FOUND)
def stats(agent_id: str, store: StoreDep, where: FilterDep) -> Stats:
    """The composite and its inputs (docs/scoring.md "The composite"), over the
    runs the filters keep (all of them without filters: the canonical one)."""
    agent = find_agent(store, agent_id)
    counts, result = store.summary(agent.id, where)
    return stats_of(agent.id, counts, result)


def stats_of(agent_id: str, counts: RunCounts, result: scoring.Composite | None) -> Stats:
    """/stats from the counts and the composite (rounded as docs/api.md says)."""
    return Stats(
        agent_id=agent_id,
        composite_score=result.composite_score if result else None,
        total_runs=counts.total,
        completed_runs=counts.completed,
        successful_runs=counts.successful,
        failed_runs=counts.failed,
        timeout_runs=counts.timeout,
        running_runs=counts.running,
        success_rate=_round(result.success_rate) if result else None,
        consistency=_round(result.consistency) if result else None,
        latency_score=_round(result.latency_score) if result else None,
        reliability_score=_round(result.reliability_score) if result else None,
        cost_score=_round(result.cost_score) if result else None,
        avg_latency_ms=result.avg_latency_ms if result else None,
        avg_cost_usd=result.avg_cost_usd if result else None,
        cost_source=counts.cost_source,
        scoring_policy=SCORING_POLICY,
        graded_runs=counts.graded,
        verified_state=scoring.verified_state(counts.completed, counts.graded),
    )


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
    agent = find_agent(store, agent_id)
    try:
        parsed = scoring.parse_weights(weights) if weights is not None else None
    except ValueError as exc:
        raise HTTPException(422, f"bad weights: {exc}") from None
    owner = caller.personal()
    if parsed is None and owner is not None:
        parsed = saved.radar_weights(owner)
    canonical = store.composite(agent.id)  # the headline: never filtered
    return fitness_of(store.radar_runs(agent.id, where), parsed, canonical)


def fitness_of(
    cohort: list[scoring.RunRecord],
    weights: dict[str, float] | None,
    canonical: scoring.Composite | None,
) -> Fitness:
    """/fitness from the radar cohort, the weights and the headline composite."""
    radar = scoring.radar(cohort, weights)
    return Fitness(
        correctness=radar.correctness,
        latency=radar.latency,
        cost=radar.cost,
        tool_efficiency=radar.tool_efficiency,
        robustness=radar.robustness,
        composite_score=radar.composite_score,
        canonical_composite_score=canonical.composite_score if canonical else None,
        weights=dict(radar.weights),
        runs_counted=radar.runs_counted,
        latency_p50_ms=radar.latency_p50_ms,
        cost_p50_usd=radar.cost_p50_usd,
        steps_p50=radar.steps_p50,
        evidence_needed=scoring.evidence_needed(cohort),
    )


@router.get("/{agent_id}/reliability", response_model=Reliability, responses=NOT_FOUND)
def reliability(agent_id: str, store: StoreDep, where: FilterDep) -> Reliability:
    """pass^k per qualifying task and their mean (docs/scoring.md "pass^k")."""
    agent = find_agent(store, agent_id)
    return reliability_of(store.repeatability(agent.id, where))


def reliability_of(result: scoring.Repeatability) -> Reliability:
    return Reliability(
        pass_1=result.pass_1,
        pass_3=result.pass_3,
        pass_5=result.pass_5,
        tasks_counted=result.tasks_counted,
        tasks=[
            TaskReliability(
                task_id=t.task_id,
                n=t.n,
                successes=t.successes,
                pass_1=t.pass_1,
                pass_3=t.pass_3,
                pass_5=t.pass_5,
            )
            for t in result.tasks
        ],
    )
