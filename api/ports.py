"""What the read API needs from a store, as Protocols the collector implements.

Times cross this boundary as epoch seconds (floats); the API renders RFC 3339.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scoring import Composite, Repeatability, RunRecord


@dataclass(frozen=True, slots=True)
class AgentInfo:
    id: str
    owner: str
    name: str
    first_seen_at: float
    last_run_at: float | None
    total_runs: int | None
    listed: bool  # has a run with a task id or an agent span (docs/api.md "Endpoints")
    deleted_at: float | None = None  # soft-deleted (only the certificate reads show those)


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which of an agent's runs a view looks at, before any cohort rule.

    `version`: exact match; with `null_version` the runs with no version.
    `since`/`until` (epoch s): since <= terminal_at < until, the collector's
    clock when the run became terminal (docs/loop.md "Versions"); with either
    set, runs not yet terminal are left out.
    """

    version: str | None = None
    null_version: bool = False
    since: float | None = None
    until: float | None = None
    screening: str | None = None  # only the runs of this screening (docs/screening.md)


ALL_RUNS = RunFilter()


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """One version of an agent, with its canonical composite."""

    version: str | None
    total_runs: int
    completed_runs: int
    successful_runs: int
    first_run_at: float | None
    last_run_at: float | None
    composite: Composite | None


@dataclass(frozen=True, slots=True)
class BoardRow:
    """An agent as the leaderboard shows it, kept by the collector's sweeper
    (it lags a run change by a sweep, about a second)."""

    agent_id: str
    owner: str
    name: str
    total_runs: int
    completed_runs: int
    graded_runs: int
    last_run_at: float | None
    composite_score: float | None
    success_rate: float | None
    axes: Mapping[str, float | None]  # the five radar axes over the latest 100 terminal runs
    radar_runs: int
    trend: tuple[float | None, ...]  # the composite over time, oldest first
    weighted: float | None = None  # the weighted radar composite, when ranked by weights


@dataclass(frozen=True, slots=True)
class ScreeningInfo:
    """One screening of an agent: its runs' counts and canonical composite, and its plan
    when the screener recorded one (docs/screening.md "Incomplete screenings"):
    `stored_runs` counts the planned (task, round) pairs that have a run. A
    screening planned and with no run yet has no first or last run."""

    screening_id: str
    suite_name: str | None
    suite_digest: str | None
    version: str | None
    rounds: int | None  # the highest round its runs name
    total_runs: int
    completed_runs: int
    successful_runs: int
    first_run_at: float | None
    last_run_at: float | None
    composite: Composite | None
    planned_rounds: int | None = None
    planned_tasks: int | None = None
    stored_runs: int | None = None
    planned_at: float | None = None

    @property
    def planned_runs(self) -> int | None:
        if self.planned_rounds is None or self.planned_tasks is None:
            return None
        return self.planned_rounds * self.planned_tasks

    @property
    def complete(self) -> bool | None:
        """Every planned dispatch has its run; None without a plan (nothing to compare)."""
        planned = self.planned_runs
        return None if planned is None else self.stored_runs == planned


@dataclass(frozen=True, slots=True)
class ScreenedRun:
    """A run of a screening, with what the screening page shows beside its record."""

    record: RunRecord
    round: int | None
    error_class: str


@dataclass(frozen=True, slots=True)
class CohortRun:
    """A run of the radar cohort, with what a reader needs beside its record."""

    record: RunRecord  # its ended_at is the run's terminal_at (it orders the cohort)
    version: str | None
    ended_at: float  # the root span's end, as every run summary shows it


@dataclass(frozen=True, slots=True)
class RunCounts:
    total: int
    completed: int
    successful: int
    failed: int
    timeout: int
    running: int
    cost_source: str | None
    graded: int = 0  # completed runs whose outcome is graded (/stats only)


@dataclass(frozen=True, slots=True)
class ToolCallInfo:
    """One counted tool step of a run."""

    name: str
    span_id: str
    start_ns: int
    end_ns: int
    status_code: int


@dataclass(frozen=True, slots=True)
class GradeInfo:
    """A run's grade (docs/loop.md "Graded outcomes"): what was posted for
    it, filled in with what its evaluation event said."""

    success: bool | None
    score: float | None
    expected_output: str | None
    output: str | None
    error_class: str | None
    graded_at: float


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A run summary with the fields docs/api.md lists."""

    id: str
    agent_id: str
    trace_id: str
    task_id: str | None
    version: str | None
    status: str
    success: bool | None
    success_source: str | None
    started_at: float
    ended_at: float
    terminal_at: float | None  # the collector's clock when it became terminal
    latency_ms: float | None
    steps: int | None
    llm_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    error_class: str
    span_count: int
    owner: str = ""
    tool_calls: Sequence[ToolCallInfo] = field(default=())
    grade: GradeInfo | None = None  # the run detail only
    screening_id: str | None = None
    unrecognised_spans: int | None = None  # null: stored before the conventions
    conventions_digest: str | None = None
    steps_source: str | None = None  # spans or requested; null when steps is (docs/runs.md)
    # Retention removed spans of its trace: the run keeps the counts it had
    # and no reclassification changes it (CONVENTIONS.md section 5).
    sealed: bool = False


@dataclass(frozen=True, slots=True)
class SpanVerdict:
    """How run assembly classified one span, and why it did or did not count.

    `rule` is the stored label (`genai:tool[0]`); `convention`, `rule_role`
    and `rule_index` spell it out, null when no rule decided (or for a span
    stored before conventions, whose `rule` is the old description).
    `unrecognised`: an `other` span no convention knows, not the root."""

    role: str
    rule: str
    counted: bool
    reason: str | None
    root: bool
    clock: str | None = None  # why the span's times were set aside (impossible times)
    # attribute -> why its count or cost was not taken ("negative"); None: all were
    ignored: Mapping[str, str] | None = None
    convention: str | None = None
    rule_role: str | None = None
    rule_index: int | None = None
    unrecognised: bool = False


@dataclass(frozen=True, slots=True)
class TraceSpan:
    """One stored span of a run, decoded for reading, with its verdict."""

    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    resource: Mapping[str, Any]  # attributes, JSON-ready
    scope: str
    details: Mapping[str, Any]  # attributes, events, links and dropped counts, JSON-ready
    verdict: SpanVerdict


@dataclass(frozen=True, slots=True)
class TraceView:
    spans: list[TraceSpan]  # the run's spans by start time, at most max_spans
    truncated: bool


@dataclass(frozen=True, slots=True)
class ScopeCoverage:
    """One instrumentation scope's spans among an agent's newest runs
    (CONVENTIONS.md section 6): how many, how many no convention recognised,
    and how the rest split by role and by the convention that knew them."""

    scope: str
    spans: int
    unrecognised: int
    roles: Mapping[str, int]  # tool, llm, agent, other -> spans
    conventions: Mapping[str, int]  # convention -> spans it recognised (a rule or applies_to)


@dataclass(frozen=True, slots=True)
class UnrecognisedName:
    """A (scope, span name) pair no convention recognised, with one run that has it."""

    scope: str
    name: str
    spans: int
    example_run_id: str


@dataclass(frozen=True, slots=True)
class Coverage:
    """What the collector could and could not recognise of an agent's spans,
    over its newest runs (`runs` of them). `spans` and `unrecognised` are
    the runs' own counts (`span_count`, `unrecognised_spans`; runs stored
    before conventions left out); `scopes` (most unrecognised first) and
    `unrecognised_names` (the most frequent pairs) group the spans of those
    runs' traces that name the agent."""

    runs: int
    spans: int
    unrecognised: int
    scopes: Sequence[ScopeCoverage]
    unrecognised_names: Sequence[UnrecognisedName]


OUTCOMES = ("success", "failure", "unknown")  # GET /runs?outcome=


@dataclass(frozen=True, slots=True)
class Scores:
    counts: RunCounts
    composite: Composite | None
    repeatability: Repeatability


class ReadStore(Protocol):
    """Reads only: what a view needs to answer. Writes are ports of their own
    (AgentWrites, WeightStore, GradeStore), so a read store can be handed to
    anything that only reads."""

    def ready(self) -> bool: ...

    def agent(self, agent_id: str) -> AgentInfo | None: ...

    def board(
        self,
        *,
        everything: bool,
        weights: Mapping[str, float] | None,
        offset: int,
        limit: int,
    ) -> tuple[list[BoardRow], int]:
        """A page of the kept board and how many agents it ranks."""
        ...

    def summary(
        self, agent_id: str, where: RunFilter = ALL_RUNS
    ) -> tuple[RunCounts, Composite | None]: ...

    def composite(self, agent_id: str) -> Composite | None: ...

    def radar_runs(self, agent_id: str, where: RunFilter = ALL_RUNS) -> list[RunRecord]: ...

    def cohort(self, agent_id: str, where: RunFilter = ALL_RUNS) -> list[CohortRun]: ...

    def versions(self, agent_id: str) -> list[VersionInfo]: ...

    def screenings(self, agent_id: str) -> list[ScreeningInfo]: ...

    def screening_runs(self, agent_id: str, screening_id: str) -> list[ScreenedRun]: ...

    def planned_tasks(self, agent_id: str, screening_id: str) -> list[str]:
        """The task ids a screening's plan names (none without a plan)."""
        ...

    def repeatability(self, agent_id: str, where: RunFilter = ALL_RUNS) -> Repeatability: ...

    def scores(self, agent_id: str, where: RunFilter) -> Scores:
        """Status counts, the composite and pass^k of the runs a filter keeps,
        from one pass over them (graded runs not counted: see `summary`)."""
        ...

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
    ) -> list[tuple[RunInfo, int]]: ...

    def run(self, run_id: str) -> RunInfo | None: ...

    def trace(self, run: RunInfo, max_spans: int) -> TraceView: ...

    def coverage(self, agent_id: str, detail: bool = True) -> Coverage:
        """The agent's spans over its newest 1,000 runs, recognised or not
        (CONVENTIONS.md section 6), in a few statements whatever the runs.
        Without `detail`, the totals alone (no scopes, no names): one read
        of the runs, for a page that only needs to know whether to warn."""
        ...


class AgentWrites(Protocol):
    """The one write to agents the API offers: the owner deletes one."""

    def delete_agent(self, agent_id: str) -> None:
        """The agent leaves lists; its runs stay; later spans are refused."""
        ...


class WeightStore(Protocol):
    """Each owner's saved radar weights (docs/loop.md "Personal radar weights")."""

    def radar_weights(self, owner: str) -> dict[str, float] | None: ...

    def save_radar_weights(self, owner: str, weights: dict[str, float]) -> None: ...

    def delete_radar_weights(self, owner: str) -> None: ...


@dataclass(frozen=True, slots=True)
class GradeInput:
    """One grade as posted, already validated."""

    agent: str
    run_key: str
    success: bool
    score: float | None = None
    expected_output: str | None = None
    output: str | None = None
    error_class: str | None = None


@dataclass(frozen=True, slots=True)
class GradeReceipt:
    """A stored grade: when, and which stored runs it graded (none: it waits)."""

    graded_at: float
    run_ids: Sequence[str]


class GradeStore(Protocol):
    def save_grade(self, owner: str, grade: GradeInput) -> GradeReceipt:
        """Durable before it returns; api.problems' `Unavailable` when it
        cannot be now, `QuotaExceeded` when it would wait past its owner's quota."""


@dataclass(frozen=True, slots=True)
class PlanInput:
    """What a screener is about to dispatch (docs/screening.md), already validated."""

    agent: str
    screening_id: str
    suite_name: str | None
    suite_digest: str | None
    version: str | None
    rounds: int
    tasks: tuple[str, ...]
    resume: bool = False


@dataclass(frozen=True, slots=True)
class PlanReceipt:
    """A recorded plan: new (`created`), or resumed with what its runs already cover.
    `missing` maps each task with a planned round that has no run to those rounds."""

    agent_id: str
    created: bool
    planned_runs: int
    stored_runs: int
    missing: Mapping[str, tuple[int, ...]]


class PlanStore(Protocol):
    def register_plan(self, owner: str, plan: PlanInput) -> PlanReceipt:
        """Durable before it returns. api.problems' `Conflict` when the screening exists
        and is not resumed, or is resumed with another plan; `Unavailable` when the
        store cannot take it now."""
        ...
