"""Response models of the improvement loop: versions, compare, diagnostics."""

from __future__ import annotations

from pydantic import BaseModel, Field


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


class AxisCompare(BaseModel):
    base: float | None
    head: float | None
    delta: float | None
    verdict: str = Field(description="improved, regressed, unchanged or insufficient_evidence")
    p_value: float | None


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


class RunOffender(BaseModel):
    run_id: str
    task_id: str | None
    version: str | None
    value: bool | int | float = Field(
        description="the axis's raw figure: success, latency_ms, cost_usd or steps"
    )
    ended_at: str | None


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
