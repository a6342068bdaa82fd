"""Response models of the improvement loop: versions, compare, diagnostics."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.coverage_schemas import CoverageWarning


class VersionItem(BaseModel):
    version: str | None = Field(description="null: runs that carry no version")
    total_runs: int
    completed_runs: int
    successful_runs: int
    first_run_at: str | None
    last_run_at: str | None
    composite_score: float | None = Field(description="canonical composite of this version")


class VersionList(BaseModel):
    items: list[VersionItem] = Field(description="newest first by first run; null version last")
    next_cursor: str | None = Field(default=None, description="the next page; null at the end")


class CompareSide(BaseModel):
    version: str | None
    runs_counted: int
    composite_score: float | None
    success_rate: float | None
    pass_1: float | None
    pass_3: float | None
    pass_5: float | None
    latency_p50_ms: float | None
    cost_p50_usd: float | None
    steps_p50: float | None


class TaskPairCompare(BaseModel):
    task_id: str
    base: float = Field(description="the task's figure on base: median, consistency or pass rate")
    head: float
    delta: float = Field(description="head - base, rounded to 9 decimals (the test's d)")


class AxisCompare(BaseModel):
    base: float | None
    head: float | None
    delta: float | None
    verdict: str = Field(description="improved, regressed, unchanged or insufficient_evidence")
    test: str | None = Field(
        description="cochran_mantel_haenszel or wilcoxon_signed_rank (paired), two_proportion_z "
        "or mann_whitney_u (unpaired); null for unpaired robustness"
    )
    paired_tasks: int | None = Field(description="tasks paired on this axis; null when unpaired")
    p_value: float | None = Field(description="the test's raw p-value")
    p_adjusted: float | None = Field(description="Holm-adjusted across the axes; the verdict's")
    pairs: list[TaskPairCompare] | None = Field(
        default=None,
        description="with evidence=true: each paired task's figures (sorted by task id)",
    )
    needed: str | None = Field(
        default=None,
        description="with evidence=true: what an axis without a verdict is missing",
    )


class CompositeCompare(BaseModel):
    base: float | None
    head: float | None
    delta: float | None


class TaskCompare(BaseModel):
    task_id: str
    base_n: int
    base_successes: int
    head_n: int
    head_successes: int
    change: str = Field(description="new, gone, broken, fixed or same")


class Compare(BaseModel):
    agent_id: str
    base: CompareSide
    head: CompareSide
    axes: dict[str, AxisCompare]
    composite: CompositeCompare
    tasks: list[TaskCompare]
    regressed: bool
    min_effect: float = Field(
        description="axis points a significant change had to move by to count (the request's)"
    )


class RunOffender(BaseModel):
    run_id: str
    task_id: str | None
    version: str | None
    value: bool | int | float = Field(
        description="the axis's raw figure: success, latency_ms, cost_usd or steps"
    )
    ended_at: str | None = Field(description="the root span's end, as in every run summary")
    terminal_at: str | None = Field(
        description="the collector's clock when the run became terminal (newest first by it)"
    )


class TaskOffender(BaseModel):
    task_id: str
    runs: int
    successes: int
    pass_rate: float
    run_ids: list[str] = Field(description="newest first")


class AxisDiagnosis(BaseModel):
    score: float | None
    offenders: list[RunOffender] | list[TaskOffender]


class Diagnostics(BaseModel):
    agent_id: str
    weakest_axis: str | None
    axes: dict[str, AxisDiagnosis]
    coverage_warning: CoverageWarning | None = Field(
        default=None,
        description="set when more than 10% of the spans of the agent's newest 1,000 runs "
        "were not recognised: its steps, LLM calls and tokens may be undercounted "
        "(GET /agents/{id}/coverage, docs/conventions.md)",
    )
