"""An agent's screenings and a screening's runs, read from `runs`, and the plans
screeners record (docs/screening.md "Reading a screening", "Incomplete screenings").

A screening is the set of runs whose root named the same
`badge.screening.id`. One grouped scan of the agent's screened runs (index
ix_runs_agent_screening_terminal) gives the list with each screening's
composite; a screening's page reads its runs once. A plan (migration 0020)
says what the screening was to dispatch; its (task, round) pairs that have a
run are counted in one more query, so a screening that lost runs shows it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sqlalchemy import and_, func, select, true
from sqlalchemy.engine import Connection

from api.ports import PlanInput, ScreenedRun, ScreeningInfo
from collector.storage.run_claims import unclaimed_screened
from collector.storage.run_records import record_of
from collector.storage.session import SqlSession
from collector.storage.tables import runs, screening_plan_tasks, screening_plans
from collector.storage.totals import TOTALS, Totals, composite_of, counts_of
from collector.types import TraceKey

_PER_SCREENING = TOTALS.add_columns(
    runs.c.screening_id,
    func.max(runs.c.suite_name),
    func.max(runs.c.suite_digest),
    func.min(runs.c.version),
    func.max(runs.c.screening_round),
    func.min(runs.c.started_ns),
    func.max(runs.c.started_ns),
)
_PLAN_COLUMNS = (
    "agent_id",
    "screening_id",
    "owner",
    "agent",
    "suite_name",
    "suite_digest",
    "version",
    "rounds",
    "tasks",
    "planned_at",
)
Pairs = dict[str, set[int]]  # task id -> the rounds that have a run


def screenings_of(conn: Connection, agent_id: str) -> list[ScreeningInfo]:
    """Every screening of the agent (planned ones without a run too), newest first."""
    query = _PER_SCREENING.where(
        runs.c.agent_id == agent_id, runs.c.screening_id.is_not(None)
    ).group_by(runs.c.agent_id, runs.c.screening_id, runs.c.status, runs.c.cost_source)
    totals: dict[str, Totals] = defaultdict(dict)
    about: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in conn.execute(query):
        totals[row.screening_id][(row.status, row.cost_source)] = tuple(row[3:8])
        about[row.screening_id].append(tuple(row[9:]))
    plans = {row.screening_id: row for row in conn.execute(_plans_of(agent_id))}
    stored = _stored_counts(conn, agent_id) if plans else {}
    found = []
    for screening in about.keys() | plans.keys():
        plan = plans.get(screening)
        suite, digest, version, rounds, first, last = _merged(about.get(screening, []))
        counts = counts_of(totals.get(screening, {}))
        found.append(
            ScreeningInfo(
                screening_id=screening,
                suite_name=suite if plan is None or suite is not None else plan.suite_name,
                suite_digest=digest if plan is None or digest is not None else plan.suite_digest,
                version=version if plan is None or version is not None else plan.version,
                rounds=rounds,
                total_runs=counts.total,
                completed_runs=counts.completed,
                successful_runs=counts.successful,
                first_run_at=first / 1e9 if first is not None else None,
                last_run_at=last / 1e9 if last is not None else None,
                composite=composite_of(totals.get(screening, {})),
                planned_rounds=plan.rounds if plan is not None else None,
                planned_tasks=plan.tasks if plan is not None else None,
                stored_runs=stored.get(screening, 0) if plan is not None else None,
                planned_at=plan.planned_at if plan is not None else None,
            )
        )
    found.sort(key=lambda s: (-_newest(s), s.screening_id))
    return found


def _newest(info: ScreeningInfo) -> float:
    """What orders the list: the first run, else (no run yet) when it was planned."""
    return info.first_run_at if info.first_run_at is not None else info.planned_at or 0.0


def _merged(parts: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """One screening's groups (by status and cost source) as one: the
    suite and version its runs name, its last round, first and last start."""

    def known(index: int) -> list[Any]:
        return [part[index] for part in parts if part[index] is not None]

    return (
        max(known(0), default=None),
        max(known(1), default=None),
        min(known(2), default=None),
        max(known(3), default=None),
        min(known(4), default=None),
        max(known(5), default=None),
    )


def _plans_of(agent_id: str, screening_id: str | None = None) -> Any:
    query = select(screening_plans).where(screening_plans.c.agent_id == agent_id)
    if screening_id is not None:
        query = query.where(screening_plans.c.screening_id == screening_id)
    return query


def _stored_counts(conn: Connection, agent_id: str) -> dict[str, int]:
    """Per planned screening: its planned (task, round) pairs that have a run."""
    plan, task = screening_plans, screening_plan_tasks
    pairs = (
        select(runs.c.screening_id, runs.c.task_id, runs.c.screening_round)
        .join(
            plan,
            and_(plan.c.agent_id == runs.c.agent_id, plan.c.screening_id == runs.c.screening_id),
        )
        .join(
            task,
            and_(
                task.c.agent_id == runs.c.agent_id,
                task.c.screening_id == runs.c.screening_id,
                task.c.task_id == runs.c.task_id,
            ),
        )
        .where(
            runs.c.agent_id == agent_id,
            runs.c.screening_round >= 1,
            runs.c.screening_round <= plan.c.rounds,
        )
        .distinct()
        .subquery()
    )
    query = select(pairs.c.screening_id, func.count()).group_by(pairs.c.screening_id)
    return {str(sid): int(count) for sid, count in conn.execute(query)}


def planned_tasks(conn: Connection, agent_id: str, screening_id: str) -> list[str]:
    task = screening_plan_tasks
    query = select(task.c.task_id).where(
        task.c.agent_id == agent_id, task.c.screening_id == screening_id
    )
    return sorted(str(row[0]) for row in conn.execute(query))


def screened_runs(conn: Connection, agent_id: str, screening: str) -> list[ScreenedRun]:
    """Every run of one screening, with its round and error class."""
    query = select(runs).where(runs.c.agent_id == agent_id, runs.c.screening_id == screening)
    return [
        ScreenedRun(record_of(r), r.screening_round, r.error_class) for r in conn.execute(query)
    ]


# -- recording a plan (a writer job) ---------------------------------------


class PlanResult(NamedTuple):
    """What recording a plan did."""

    created: bool
    conflict: str | None  # why it was refused, or None
    stored: Pairs  # the planned pairs that already have a run (a resume)
    # Traces of runs of the agent's own that named the screening, marked to
    # recompute: the screening is now a grader's (collector.runs.claims).
    recheck: set[TraceKey]


def register_plan(
    session: SqlSession, agent_id: str, owner: str, plan: PlanInput, now: float
) -> PlanResult:
    """Record a screening's plan, in the writer's transaction.

    Refused (`conflict`) when the screening exists and is not resumed, or is
    resumed with another plan. A screening exists when it has a plan or a
    grader's run names it: a re-run of an id would merge its new runs into
    the old ones (same run keys). Runs of the agent's own that name it do
    not make it exist (an agent could take an id before its screener); they
    leave it once it is planned.
    """
    result = _register(session, agent_id, owner, plan, now)
    if result.conflict is not None:
        return result
    recheck = unclaimed_screened(session, [(agent_id, plan.screening_id)])
    session.mark_pending(recheck, now)
    return result._replace(recheck=recheck)


def _register(
    session: SqlSession, agent_id: str, owner: str, plan: PlanInput, now: float
) -> PlanResult:
    existing = session.execute(_plans_of(agent_id, plan.screening_id)).first()
    ran = _runs_of(session, agent_id, plan.screening_id)
    if existing is None and not ran:
        created = _insert(session, agent_id, owner, plan, now)
        if not created:  # another screener took the id in the same instant
            return _refused(f"screening {plan.screening_id!r} was planned at the same moment")
        return PlanResult(True, None, {}, set())
    if not plan.resume:
        count = sum(len(rounds) for rounds in ran.values())
        return _refused(_exists(plan, count, existing))
    if existing is not None:
        differs = _difference(existing, plan, _task_ids(session, agent_id, plan.screening_id))
        if differs:
            return _refused(f"screening {plan.screening_id!r} was planned with {differs}")
    elif not _insert(session, agent_id, owner, plan, now):
        return _refused(f"screening {plan.screening_id!r} was planned at the same moment")
    planned = set(plan.tasks)
    stored = {
        task: {r for r in rounds if 1 <= r <= plan.rounds}
        for task, rounds in ran.items()
        if task in planned
    }
    return PlanResult(False, None, {t: rounds for t, rounds in stored.items() if rounds}, set())


def _refused(conflict: str) -> PlanResult:
    return PlanResult(False, conflict, {}, set())


def _runs_of(session: SqlSession, agent_id: str, screening_id: str) -> Pairs:
    """The (task, round) pairs the screening's runs a grader's span claims
    name; a run without either counts as existing under the empty task id
    (it makes the screening exist, fills no pair)."""
    query = (
        select(runs.c.task_id, runs.c.screening_round)
        .where(
            runs.c.agent_id == agent_id,
            runs.c.screening_id == screening_id,
            runs.c.grader_claim == true(),
        )
        .distinct()
    )
    pairs: Pairs = defaultdict(set)
    for row in session.execute(query):
        task_id, round_ = row.task_id, row.screening_round
        if task_id is None or round_ is None:
            pairs.setdefault("", set())
        else:
            pairs[str(task_id)].add(int(round_))
    return dict(pairs)


def _insert(session: SqlSession, agent_id: str, owner: str, plan: PlanInput, now: float) -> bool:
    """Insert the plan and its tasks; False when its key was taken meanwhile."""
    row = (
        agent_id,
        plan.screening_id,
        owner,
        plan.agent,
        plan.suite_name,
        plan.suite_digest,
        plan.version,
        plan.rounds,
        len(plan.tasks),
        now,
    )
    cur = session.cursor()
    cur.execute(
        f"INSERT INTO {screening_plans.name} ({', '.join(_PLAN_COLUMNS)}) "
        f"VALUES ({session.marks(len(_PLAN_COLUMNS))}) ON CONFLICT DO NOTHING",
        row,
    )
    if cur.rowcount != 1:
        return False
    session.insert_ignore_rows(
        screening_plan_tasks,
        ("agent_id", "screening_id", "task_id"),
        [(agent_id, plan.screening_id, task) for task in plan.tasks],
    )
    return True


def _task_ids(session: SqlSession, agent_id: str, screening_id: str) -> set[str]:
    task = screening_plan_tasks
    query = select(task.c.task_id).where(
        task.c.agent_id == agent_id, task.c.screening_id == screening_id
    )
    return {str(row[0]) for row in session.execute(query)}


def _difference(existing: Any, plan: PlanInput, tasks: Iterable[str]) -> str | None:
    """How a resumed plan differs from the recorded one, in words, or None."""
    wanted: Mapping[str, tuple[Any, Any]] = {
        "suite digest": (existing.suite_digest, plan.suite_digest),
        "rounds": (existing.rounds, plan.rounds),
        "version": (existing.version, plan.version),
    }
    for name, (was, now) in wanted.items():
        if was != now:
            return f"{name} {was!r}, not {now!r}"
    if set(tasks) != set(plan.tasks):
        return "other tasks"
    return None


def _exists(plan: PlanInput, stored: int, existing: Any) -> str:
    planned = f" of {existing.rounds * existing.tasks} planned" if existing is not None else ""
    return (
        f"screening {plan.screening_id!r} of agent {plan.agent!r} exists ({stored}{planned} "
        "runs stored): running it again would replace its runs; resume it to dispatch only "
        "what is missing"
    )
