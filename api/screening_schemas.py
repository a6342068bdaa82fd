"""Response models of the screening views (docs/screening.md "Reading a screening")."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)

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
    first_run_at: str | None = Field(description="null while a planned screening has no run")
    last_run_at: str | None
    composite_score: float | None = Field(description="canonical composite of its runs")
    planned_rounds: int | None = Field(
        description="the rounds the screener planned; null when it recorded no plan"
    )
    planned_tasks: int | None = Field(description="the tasks the screener planned")
    planned_runs: int | None = Field(description="planned_rounds x planned_tasks")
    stored_runs: int | None = Field(
        description="the planned (task, round) dispatches that have a run; null without a plan"
    )
    complete: bool | None = Field(
        description="a run is stored for every planned dispatch; false while the screening "
        "runs and after one that was interrupted or lost runs; null without a plan"
    )
    planned_at: str | None = Field(description="when the screener recorded the plan")


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


SCREENING_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,64}$"  # SCREEN.md section 6


def _no_nul(text: str | None) -> str | None:
    if text is not None and "\x00" in text:  # no SQL text column stores one
        raise ValueError("holds a NUL character")
    return text


def _unique(tasks: list[str]) -> list[str]:
    if len(set(tasks)) != len(tasks):
        raise ValueError("names a task twice")
    for task in tasks:
        _no_nul(task)
    return tasks


Text = Annotated[StrictStr, AfterValidator(_no_nul)]


def _whole(value: object) -> object:
    """JSON Schema's `integer` takes any number with no fraction (`33.0`);
    a client that serialises numbers as doubles must not be refused. Text and
    booleans stay refused by the strict integer after this."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class PlanBody(BaseModel):
    """What `screen` is about to dispatch (docs/screening.md "Incomplete screenings")."""

    model_config = ConfigDict(extra="ignore")

    agent: Annotated[Text, Field(min_length=1, max_length=500)] = Field(
        description="the agent's name under the key's owner"
    )
    screening_id: Annotated[StrictStr, Field(pattern=SCREENING_ID_PATTERN)]
    suite_name: Annotated[Text, Field(max_length=64)] | None = None
    suite_digest: Annotated[Text, Field(max_length=64)] | None = None
    version: Annotated[Text, Field(max_length=1024)] | None = None
    rounds: Annotated[StrictInt, Field(ge=1, le=100), BeforeValidator(_whole)]
    tasks: Annotated[
        list[Annotated[StrictStr, Field(min_length=1, max_length=256)]],
        Field(min_length=1, max_length=10_000, json_schema_extra={"uniqueItems": True}),
        AfterValidator(_unique),
    ] = Field(description="the suite's task ids, each once")
    resume: StrictBool = Field(
        default=False,
        description="the screening may exist: record nothing new, answer what is missing",
    )


class MissingRounds(BaseModel):
    task_id: str
    rounds: list[int] = Field(description="the planned rounds of the task without a run")


class PlanAccepted(BaseModel):
    agent: str
    agent_id: str = Field(description="the agent's id (it may have no run yet)")
    screening_id: str
    created: bool = Field(description="a new screening (false: a resumed one)")
    planned_runs: int
    stored_runs: int = Field(description="planned dispatches that have a run already")
    missing: list[MissingRounds] = Field(description="what is left to dispatch, in suite order")
