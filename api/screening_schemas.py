"""Response models of the screening views (docs/screening.md "Reading a screening")."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas import Page


class ScreeningItem(BaseModel):
    screening_id: str
    suite_name: str | None
    suite_digest: str | None
    version: str | None
    rounds: int | None = Field(description="the highest round its runs name")
    total_runs: int
    completed_runs: int
    successful_runs: int
    first_run_at: str
    last_run_at: str
    composite_score: float | None = Field(description="canonical composite of its runs")


class ScreeningList(Page):
    items: list[ScreeningItem] = Field(description="newest first by first run")


class ScreeningTask(BaseModel):
    task_id: str
    runs: int
    successes: int
    pass_rate: float | None
    outcomes: list[bool | None] = Field(description="by round (1 first): pass, fail or null")
    error_classes: dict[str, int] = Field(description="error class -> runs, `none` included")
    latency_p50_ms: float | None
    steps_p50: float | None


class ScreeningRadar(BaseModel):
    correctness: float | None
    latency: float | None
    cost: float | None
    tool_efficiency: float | None
    robustness: float | None
    composite_score: float | None
    runs_counted: int


class ScreeningDetail(ScreeningItem):
    tasks: list[ScreeningTask] = Field(description="sorted by task id")
    pass_1: float | None
    pass_3: float | None
    pass_5: float | None
    radar: ScreeningRadar = Field(description="the five axes over every run of the screening")
