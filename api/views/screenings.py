"""An agent's screenings, what one found, task by task, and the plans screeners record.

A screening is the runs whose root named one `badge.screening.id`
(docs/screening.md). Its page is judged on every run it made: the radar and
pass^k take all of its terminal runs, not the latest 100, since the rounds
of a screening are one experiment. A screening whose screener recorded its
plan also lists the planned tasks that have no run yet, and says whether it
is complete.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import scoring
from api.auth import GRADER, Caller
from api.ports import AgentInfo, PlanInput, PlanStore, ReadStore, ScreenedRun, ScreeningInfo
from api.problems import KeyRequired, NotFound, NotYours
from api.render import decode_cursor, encode_cursor, rfc3339
from api.screening_schemas import (
    MissingRounds,
    PlanAccepted,
    ScreeningDetail,
    ScreeningItem,
    ScreeningList,
    ScreeningRadar,
    ScreeningTask,
)
from api.views.agents import find_agent
from api.visibility import public_error_class


def list_screenings(
    store: ReadStore, agent_id: str, page_size: int = 50, cursor: str | None = None
) -> ScreeningList:
    """The agent's screenings, newest first by their first run."""
    agent = find_agent(store, agent_id)
    found = store.screenings(agent.id)
    start = 0
    if cursor:
        after = decode_cursor(cursor)
        start = next((i + 1 for i, s in enumerate(found) if s.screening_id == after), len(found))
    page = found[start : start + page_size]
    more = start + page_size < len(found)
    return ScreeningList(
        items=[screening_item(s) for s in page],
        next_cursor=encode_cursor(page[-1].screening_id) if more and page else None,
    )


def screening(
    store: ReadStore, caller: Caller, agent_id: str, screening_id: str
) -> ScreeningDetail:
    """One screening: its tasks by round, pass^k and radar over its runs.

    Error classes beyond the fixed list read `other` without the owner's key."""
    agent = find_agent(store, agent_id)
    info, screened = screening_view(store, agent, screening_id, caller)
    return screening_detail(info, screened, store.planned_tasks(agent.id, screening_id))


def screening_view(
    store: ReadStore, agent: AgentInfo, screening_id: str, caller: Caller
) -> tuple[ScreeningInfo, list[ScreenedRun]]:
    """The screening and its runs as this caller may see them."""
    info = next((s for s in store.screenings(agent.id) if s.screening_id == screening_id), None)
    if info is None:
        raise NotFound(f"unknown screening {screening_id!r}")
    screened = store.screening_runs(agent.id, screening_id)
    if not caller.sees_owned(agent.owner):
        screened = [
            ScreenedRun(r.record, r.round, public_error_class(r.error_class)) for r in screened
        ]
    return info, screened


def shown_rounds(info: ScreeningInfo) -> int:
    """The rounds a screening's table has: its runs' highest, or its plan's when more."""
    return max(info.rounds or 0, info.planned_rounds or 0)


def screening_detail(
    info: ScreeningInfo, screened: list[ScreenedRun], planned: Sequence[str] = ()
) -> ScreeningDetail:
    """The document of GET .../screenings/{screening_id} from its runs; the planned
    tasks without a run are rows with no outcome."""
    records = [run.record for run in screened]
    repeat = scoring.pass_k(records)
    radar = scoring.radar(records, cohort_size=None)
    return ScreeningDetail(
        **screening_item(info).model_dump(),
        tasks=screening_tasks(screened, shown_rounds(info), planned),
        pass_1=repeat.pass_1,
        pass_3=repeat.pass_3,
        pass_5=repeat.pass_5,
        radar=ScreeningRadar(
            correctness=radar.correctness,
            latency=radar.latency,
            cost=radar.cost,
            tool_efficiency=radar.tool_efficiency,
            robustness=radar.robustness,
            composite_score=radar.composite_score,
            runs_counted=radar.runs_counted,
        ),
    )


def screening_item(info: ScreeningInfo) -> ScreeningItem:
    return ScreeningItem(
        screening_id=info.screening_id,
        suite_name=info.suite_name,
        suite_digest=info.suite_digest,
        version=info.version,
        rounds=info.rounds,
        total_runs=info.total_runs,
        completed_runs=info.completed_runs,
        successful_runs=info.successful_runs,
        first_run_at=rfc3339(info.first_run_at),
        last_run_at=rfc3339(info.last_run_at),
        composite_score=info.composite.composite_score if info.composite else None,
        planned_rounds=info.planned_rounds,
        planned_tasks=info.planned_tasks,
        planned_runs=info.planned_runs,
        stored_runs=info.stored_runs,
        complete=info.complete,
        planned_at=rfc3339(info.planned_at),
    )


def screening_tasks(
    screened: list[ScreenedRun], rounds: int, planned: Sequence[str] = ()
) -> list[ScreeningTask]:
    """Per task (a planned one without a run too): its runs, their outcomes by round
    (`by_round`), error classes and medians."""
    by_task = tasks_by_id(screened)
    tasks = []
    for task_id in sorted(by_task.keys() | set(planned)):
        members = by_task.get(task_id, [])
        outcomes = [None if r is None else r.record.success for r in by_round(members, rounds)]
        known = [r.record.success for r in members if r.record.success is not None]
        latencies = [r.record.latency_ms for r in members if r.record.latency_ms is not None]
        steps = [float(r.record.steps) for r in members if r.record.steps is not None]
        tasks.append(
            ScreeningTask(
                task_id=task_id,
                runs=len(members),
                successes=sum(known),
                pass_rate=sum(known) / len(known) if known else None,
                outcomes=outcomes,
                error_classes=dict(sorted(Counter(r.error_class for r in members).items())),
                latency_p50_ms=scoring.median(latencies) if latencies else None,
                steps_p50=scoring.median(steps) if steps else None,
            )
        )
    return tasks


def by_round(members: list[ScreenedRun], rounds: int) -> list[ScreenedRun | None]:
    """One task's run of each round (1 first), None for a round without one.

    A round's run is its latest to end (a re-sent dispatch replaces it)."""
    ordered = sorted(
        members, key=lambda r: (r.record.ended_at is not None, r.record.ended_at, r.record.id)
    )
    chosen: list[ScreenedRun | None] = [None] * rounds
    for run in ordered:
        if run.round is not None and 1 <= run.round <= rounds:
            chosen[run.round - 1] = run
    return chosen


def tasks_by_id(screened: list[ScreenedRun]) -> dict[str, list[ScreenedRun]]:
    """The screening's runs grouped by task id (runs without one left out)."""
    by_task: dict[str, list[ScreenedRun]] = defaultdict(list)
    for run in screened:
        if run.record.task_id is not None:
            by_task[run.record.task_id].append(run)
    return by_task


def record_plan(plans: PlanStore, caller: Caller, plan: PlanInput) -> PlanAccepted:
    """A screener's plan, stored under a grader key's owner before it dispatches: only a
    grader's screening counts as verified, and an agent may not plan its own."""
    if caller.owner is None:
        raise KeyRequired("a grader key is required")
    if caller.role != GRADER:
        raise NotYours("only a key with the grader role may record a screening's plan")
    receipt = plans.register_plan(caller.owner, plan)
    return PlanAccepted(
        agent=plan.agent,
        agent_id=receipt.agent_id,
        screening_id=plan.screening_id,
        created=receipt.created,
        planned_runs=receipt.planned_runs,
        stored_runs=receipt.stored_runs,
        missing=[
            MissingRounds(task_id=task, rounds=list(receipt.missing[task]))
            for task in plan.tasks
            if task in receipt.missing
        ],
    )
