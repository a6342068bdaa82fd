"""The leaderboard, one agent, its stats, fitness radar and pass^k; deleting one."""

from __future__ import annotations

import uuid

import scoring
from api.auth import Caller
from api.ports import AgentInfo, AgentWrites, ReadStore, RunCounts, RunFilter, WeightStore
from api.problems import Invalid, NotFound
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


def find_agent(store: ReadStore, agent_id: str) -> AgentInfo:
    """A malformed id is not found, like an unknown one (docs/api.md)."""
    try:
        uuid.UUID(agent_id)
    except ValueError:
        raise NotFound("unknown agent") from None
    agent = store.agent(agent_id)
    if agent is None:
        raise NotFound("unknown agent")
    return agent


def board(store: ReadStore, *, everything: bool, page_size: int, cursor: str | None) -> AgentList:
    """Leaderboard: by composite (nulls last), then name, from the board the
    collector keeps per agent (one query whatever the number of agents)."""
    start = page_offset(cursor) if cursor else 0
    page, total = store.board(everything=everything, weights=None, offset=start, limit=page_size)
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


def agent(store: ReadStore, agent_id: str) -> Agent:
    found = find_agent(store, agent_id)
    return Agent(
        id=found.id,
        owner=found.owner,
        name=found.name,
        first_seen_at=rfc3339(found.first_seen_at) or "",
        last_run_at=rfc3339(found.last_run_at),
    )


def delete_agent(store: ReadStore, writes: AgentWrites, caller: Caller, agent_id: str) -> None:
    """Owner only: the agent leaves lists; its runs stay; later spans are refused."""
    found = find_agent(store, agent_id)
    caller.require_owner(found.owner)
    writes.delete_agent(found.id)


def stats(store: ReadStore, agent_id: str, where: RunFilter) -> Stats:
    """The composite and its inputs (docs/scoring.md "The composite"), over the
    runs the filters keep (all of them without filters: the canonical one)."""
    found = find_agent(store, agent_id)
    counts, result = store.summary(found.id, where)
    return stats_of(found.id, counts, result)


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


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


def parse_weights(text: str | None) -> dict[str, float] | None:
    """`correctness:2,latency:1` as weights; None when not given."""
    if text is None:
        return None
    try:
        return scoring.parse_weights(text)
    except ValueError as exc:
        raise Invalid(f"bad weights: {exc}") from None


def checked_weights(weights: dict[str, float]) -> dict[str, float]:
    """Weights as given in a body or by sliders, checked as the radar takes them."""
    try:
        return scoring.validate_weights(weights)
    except ValueError as exc:
        raise Invalid(f"bad weights: {exc}") from None


def viewer_weights(caller: Caller, saved: WeightStore) -> dict[str, float] | None:
    """The caller's saved radar weights (PUT /me/radar-weights), if any."""
    owner = caller.personal()
    return saved.radar_weights(owner) if owner is not None else None


def fitness(
    store: ReadStore,
    saved: WeightStore,
    caller: Caller,
    agent_id: str,
    where: RunFilter,
    weights: str | None,
) -> Fitness:
    """The five-axis radar over the latest 100 terminal runs (docs/scoring.md);
    without `weights`, the caller's saved weights apply."""
    found = find_agent(store, agent_id)
    parsed = parse_weights(weights)
    if parsed is None:
        parsed = viewer_weights(caller, saved)
    canonical = store.composite(found.id)  # the headline: never filtered
    return fitness_of(store.radar_runs(found.id, where), parsed, canonical)


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


def reliability(store: ReadStore, agent_id: str, where: RunFilter) -> Reliability:
    """pass^k per qualifying task and their mean (docs/scoring.md "pass^k")."""
    found = find_agent(store, agent_id)
    return reliability_of(store.repeatability(found.id, where))


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
