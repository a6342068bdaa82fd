"""`api.ports.ReadStore` over the SQL tables.

Numbers come from `scoring` only: the composite from per-agent sums done in
SQL (`composite_from_aggregates`, which `composite()` itself uses), pass^k
from per-task counts, the radar from the 100 rows of its cohort. Nothing
loads every run of an agent into Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, replace
from typing import Any

from sqlalchemy import and_, case, func, literal_column, or_, select

import scoring
from api.ports import (
    ALL_RUNS,
    AgentInfo,
    BoardRow,
    CohortRun,
    Coverage,
    GradeInfo,
    RunCounts,
    RunFilter,
    RunInfo,
    Scores,
    ScreenedRun,
    ScreeningInfo,
    ToolCallInfo,
    TraceView,
    VersionInfo,
)
from collector.assembly.runs import Timers
from collector.storage import kept_totals
from collector.storage.board import board_page
from collector.storage.coverage import coverage_of
from collector.storage.engine import Database, ping
from collector.storage.grades import GRADED, grade_of
from collector.storage.rows import GradeRow
from collector.storage.run_records import cohort_rows, record_of
from collector.storage.screenings import planned_tasks, screened_runs, screenings_of
from collector.storage.tables import agents, resources, runs, spans
from collector.storage.totals import TOTALS, composite_of, conditions, counts_of
from collector.storage.trace_spans import trace_spans as trace_records
from scoring import policy

TERMINAL = tuple(sorted(policy.TERMINAL_STATUSES))
# A literal, as in the partial index ix_runs_graded's WHERE: with a bound
# value neither planner would choose that index.
_IS_GRADED = runs.c.success_source == literal_column(f"'{GRADED}'")


class SqlReadStore:
    """Reads only (api.ports.ReadStore); the writes the API offers are
    collector.storage.agents.AgentRemoval, SqlWeightStore and the grade desk."""

    def __init__(self, db: Database, timers: Timers, clock: Callable[[], float]) -> None:
        self._db = db
        self._timers = timers
        self._clock = clock

    def ready(self) -> bool:
        return ping(self._db)

    def agent(self, agent_id: str) -> AgentInfo | None:
        """One agent without joining its runs: index lookups only."""
        with self._db.reader.connect() as conn:
            row = conn.execute(
                select(agents).where(agents.c.id == agent_id, agents.c.deleted_at.is_(None))
            ).first()
            if row is None:
                return None
            last_ns = conn.execute(
                select(func.max(runs.c.started_ns)).where(runs.c.agent_id == agent_id)
            ).scalar()
        return AgentInfo(
            id=row.id,
            owner=row.owner,
            name=row.name,
            first_seen_at=row.first_seen_at,
            last_run_at=last_ns / 1e9 if last_ns is not None else None,
            total_runs=None,  # the single-agent view does not show it; counting costs a scan
            listed=True,
        )

    def _totals(
        self, agent_id: str, where: RunFilter = ALL_RUNS
    ) -> dict[tuple[str, str | None], tuple[Any, ...]]:
        """Per (status, cost source) the sums scoring needs: kept, or with a
        time window one covering-index scan."""
        with self._db.reader.connect() as conn:
            if kept_totals.keepable(where):
                rows = kept_totals.totals_rows(conn, agent_id, where)
                return {(r[1], r[2]): tuple(r[3:]) for r in rows}
            query = TOTALS.where(runs.c.agent_id == agent_id, *conditions(where)).group_by(
                runs.c.agent_id, runs.c.status, runs.c.cost_source
            )
            return {(r.status, r.cost_source): tuple(r[3:]) for r in conn.execute(query)}

    def summary(
        self, agent_id: str, where: RunFilter = ALL_RUNS
    ) -> tuple[RunCounts, scoring.Composite | None]:
        """Counts and the composite from ONE scan of the covering index, and
        the graded runs from the (small) index of graded runs."""
        totals = self._totals(agent_id, where)
        with self._db.reader.connect() as conn:
            graded = _graded_runs(conn, agent_id, where)
        return replace(counts_of(totals), graded=graded), composite_of(totals)

    def composite(self, agent_id: str) -> scoring.Composite | None:
        return composite_of(self._totals(agent_id))

    def radar_runs(self, agent_id: str, where: RunFilter = ALL_RUNS) -> list[scoring.RunRecord]:
        return [run.record for run in self.cohort(agent_id, where)]

    def cohort(self, agent_id: str, where: RunFilter = ALL_RUNS) -> list[CohortRun]:
        """The radar's cohort: the latest terminal runs (docs/scoring.md)."""
        with self._db.reader.connect() as conn:
            rows = cohort_rows(conn, agent_id, where)
        return [CohortRun(record_of(r), r.version, r.ended_ns / 1e9) for r in rows]

    def versions(self, agent_id: str) -> list[VersionInfo]:
        """Every version of the agent (null included): newest first by first run.

        From the kept sums; first and last run are the earliest and latest
        start the version ever had (a run deleted later leaves them)."""
        totals: dict[str | None, dict[tuple[str, str | None], tuple[Any, ...]]] = {}
        spans: dict[str | None, tuple[int, int]] = {}  # version -> first, last start
        with self._db.reader.connect() as conn:
            for version, status, source, *sums, first_ns, last_ns in kept_totals.version_rows(
                conn, agent_id
            ):
                totals.setdefault(version, {})[(status, source)] = tuple(sums)
                first, last = spans.get(version, (first_ns, last_ns))
                spans[version] = (min(first, first_ns), max(last, last_ns))
        found = []
        for version, (first_ns, last_ns) in spans.items():
            sums_of = totals[version]
            version_counts = counts_of(sums_of)
            found.append(
                VersionInfo(
                    version=version,
                    total_runs=version_counts.total,
                    completed_runs=version_counts.completed,
                    successful_runs=version_counts.successful,
                    first_run_at=first_ns / 1e9,
                    last_run_at=last_ns / 1e9,
                    composite=composite_of(sums_of),
                )
            )
        found.sort(key=lambda v: (v.version is None, -(v.first_run_at or 0.0), v.version or ""))
        return found

    def board(
        self,
        *,
        everything: bool,
        weights: Mapping[str, float] | None,
        offset: int,
        limit: int,
    ) -> tuple[list[BoardRow], int]:
        with self._db.reader.connect() as conn:
            return board_page(
                conn, everything=everything, weights=weights, offset=offset, limit=limit
            )

    def screenings(self, agent_id: str) -> list[ScreeningInfo]:
        with self._db.reader.connect() as conn:
            return screenings_of(conn, agent_id)

    def screening_runs(self, agent_id: str, screening_id: str) -> list[ScreenedRun]:
        with self._db.reader.connect() as conn:
            return screened_runs(conn, agent_id, screening_id)

    def planned_tasks(self, agent_id: str, screening_id: str) -> list[str]:
        with self._db.reader.connect() as conn:
            return planned_tasks(conn, agent_id, screening_id)

    def scores(self, agent_id: str, where: RunFilter) -> Scores:
        """Counts, the composite and pass^k of the runs a filter keeps, from ONE
        scan (compare needs both per side; two scans of 50k runs each took
        ~60 ms; the agent page needs all three)."""
        query = (
            select(
                runs.c.status,
                runs.c.cost_source,
                runs.c.success,
                runs.c.task_id,
                func.count(),
                func.sum(runs.c.latency_ms),
                func.count(runs.c.latency_ms),
                func.sum(func.coalesce(runs.c.cost_usd, 0.0)),
            )
            .where(runs.c.agent_id == agent_id, *conditions(where))
            .group_by(runs.c.status, runs.c.cost_source, runs.c.success, runs.c.task_id)
        )
        totals: dict[tuple[str, str | None], list[Any]] = {}
        per_task: dict[str, tuple[int, int]] = {}
        with self._db.reader.connect() as conn:
            rows: Iterable[Any] = (
                kept_totals.outcome_rows(conn, agent_id, where)
                if kept_totals.keepable(where)
                else conn.execute(query)
            )
            for status, source, success, task, count, lat_sum, lat_n, cost_sum in rows:
                sums = totals.setdefault((status, source), [0, 0, 0.0, 0, 0.0])
                sums[0] += count
                sums[1] += count if success is True else 0
                sums[2] += lat_sum or 0.0
                sums[3] += lat_n
                sums[4] += cost_sum or 0.0
                _count_task(per_task, status, success, task, count)
            graded = _graded_runs(conn, agent_id, where)
        summed = {key: tuple(v) for key, v in totals.items()}
        return Scores(
            replace(counts_of(summed), graded=graded),
            composite_of(summed),
            scoring.pass_k_from_counts(per_task),
        )

    def repeatability(self, agent_id: str, where: RunFilter = ALL_RUNS) -> scoring.Repeatability:
        if kept_totals.keepable(where):  # the per-task counts alone, not all of scores()
            per_task: dict[str, tuple[int, int]] = {}
            with self._db.reader.connect() as conn:
                for status, _, success, task, count, *_ in kept_totals.outcome_rows(
                    conn, agent_id, where
                ):
                    _count_task(per_task, status, success, task, count)
            return scoring.pass_k_from_counts(per_task)
        query = (
            select(
                runs.c.task_id,
                func.count(),
                func.sum(case((runs.c.success.is_(True), 1), else_=0)),
            )
            .where(
                runs.c.agent_id == agent_id,
                runs.c.status.in_(TERMINAL),
                runs.c.success.is_not(None),
                runs.c.task_id.is_not(None),
                *conditions(where),
            )
            .group_by(runs.c.task_id)
        )
        with self._db.reader.connect() as conn:
            counts = {t: (int(n), int(c or 0)) for t, n, c in conn.execute(query)}
        return scoring.pass_k_from_counts(counts)

    def all_runs(self, agent_id: str) -> list[scoring.RunRecord]:
        """Every run of an agent as scoring records (tests and CLI only)."""
        with self._db.reader.connect() as conn:
            rows = conn.execute(select(runs).where(runs.c.agent_id == agent_id)).all()
        return [record_of(r) for r in rows]

    def runs(
        self,
        *,
        agent_id: str | None,
        task_id: str | None,
        status: str | None,
        version: str | None = None,
        outcome: str | None = None,
        screening: str | None = None,
        before: tuple[int, str] | None,
        limit: int,
    ) -> list[tuple[RunInfo, int]]:
        query = select(runs)
        if screening is not None:
            query = query.where(runs.c.screening_id == screening)
        if outcome == "success":
            query = query.where(runs.c.success.is_(True))
        elif outcome == "failure":
            query = query.where(runs.c.success.is_(False))
        elif outcome == "unknown":
            query = query.where(runs.c.success.is_(None))
        if agent_id is not None:
            query = query.where(runs.c.agent_id == agent_id)
        if task_id is not None:
            query = query.where(runs.c.task_id == task_id)
        if version is not None:
            query = query.where(runs.c.version == version)
        if status is not None:
            query = query.where(runs.c.status == status)
        if before is not None:
            started, run_id = before
            query = query.where(
                or_(
                    runs.c.started_ns < started,
                    and_(runs.c.started_ns == started, runs.c.id < run_id),
                )
            )
        query = query.order_by(runs.c.started_ns.desc(), runs.c.id.desc()).limit(limit)
        with self._db.reader.connect() as conn:
            rows = conn.execute(query).all()
        return [(_run_row(r), int(r.started_ns)) for r in rows]

    def run(self, run_id: str) -> RunInfo | None:
        """One run, with its grade (the run detail)."""
        with self._db.reading() as session:
            seq = session.run_seq(run_id)
            row = session.execute(select(runs).where(runs.c.seq == seq)).first()
            if row is None:
                return None
            posted = grade_of(session, run_id)
        return replace(_run_row(row), grade=_grade(row, posted))

    def trace(self, run: RunInfo, max_spans: int) -> TraceView:
        with self._db.reading() as session:
            key = (run.owner, run.trace_id)
            number = session.trace_numbers([key]).get(key)
            query = (
                select(spans, resources.c.encoded.label("resource"))
                .select_from(
                    spans.outerjoin(resources, resources.c.digest == spans.c.resource_digest)
                )
                .where(spans.c.trace_ref == number)
            )
            rows = session.execute(query).all() if number is not None else []
        return trace_records(run.id, run.trace_id, rows, self._clock(), self._timers, max_spans)

    def coverage(self, agent_id: str, detail: bool = True) -> Coverage:
        """CONVENTIONS.md section 6, over the agent's newest runs (storage.coverage)."""
        with self._db.reading() as session:
            return coverage_of(session, agent_id, detail)


def _count_task(
    per_task: dict[str, tuple[int, int]],
    status: str,
    success: bool | None,
    task: str | None,
    count: int,
) -> None:
    """Add runs to their task's (known outcomes, successes): pass^k counts
    terminal runs with a task and a known outcome (docs/scoring.md)."""
    if status in TERMINAL and success is not None and task is not None:
        n, c = per_task.get(task, (0, 0))
        per_task[task] = (n + count, c + (count if success else 0))


def _graded_runs(conn: Any, agent_id: str, where: RunFilter) -> int:
    """Completed runs graded: kept, or from the (small) partial index of graded runs."""
    if kept_totals.keepable(where):
        return sum(graded for _, graded in kept_totals.graded_rows(conn, agent_id, where))
    query = (
        select(func.count())
        .select_from(runs)
        .where(runs.c.agent_id == agent_id, runs.c.status == "completed", _IS_GRADED)
        .where(*conditions(where))
    )
    return int(conn.execute(query).scalar_one())


def _grade(r: Any, posted: GradeRow | None) -> GradeInfo | None:
    """What was posted, filled in with what the spans said (docs/loop.md)."""
    said = json.loads(r.evaluation) if r.evaluation else None
    if posted is None and said is None and r.success_source != GRADED:
        return None
    said = said or {}
    return GradeInfo(
        success=r.success,
        score=posted.score if posted and posted.score is not None else said.get("score"),
        expected_output=posted.expected_output if posted else None,
        output=posted.output if posted and posted.output is not None else said.get("output"),
        error_class=posted.error_class if posted else None,
        graded_at=posted.graded_at if posted else float(said.get("at") or r.updated_at),
    )


# RunInfo fields the row gives under another name or shape; the rest are
# copied by name (tests/collector/test_run_record.py keeps them in step).
_CONVERTED = frozenset({"started_at", "ended_at", "tool_calls", "grade", "sealed"})
_COPIED = tuple(f.name for f in fields(RunInfo) if f.name not in _CONVERTED)


def _run_row(r: Any) -> RunInfo:
    return RunInfo(
        **{name: getattr(r, name) for name in _COPIED},
        started_at=r.started_ns / 1e9,
        ended_at=r.ended_ns / 1e9,
        sealed=r.sealed_at is not None,
        tool_calls=[
            ToolCallInfo(
                str(call["name"]),
                str(call["span_id"]),
                int(call["start_ns"]),
                int(call["end_ns"]),
                int(call["status_code"]),
            )
            for call in json.loads(r.tool_calls)
        ],
    )
