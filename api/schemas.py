"""Response models: what `/openapi.json` documents, field by field (docs/api.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Page(BaseModel):
    next_cursor: str | None = Field(description="opaque; pass as `cursor` for the next page")


class AgentListItem(BaseModel):
    id: str
    owner: str
    name: str
    composite_score: float | None = Field(description="headline composite, 0-100")
    total_runs: int
    last_run_at: str | None = Field(description="RFC 3339 UTC start of the latest run")


class AgentList(Page):
    items: list[AgentListItem]


class Agent(BaseModel):
    id: str
    owner: str
    name: str
    first_seen_at: str
    last_run_at: str | None


class Stats(BaseModel):
    agent_id: str
    composite_score: float | None
    total_runs: int
    completed_runs: int
    successful_runs: int
    failed_runs: int
    timeout_runs: int
    running_runs: int
    success_rate: float | None
    consistency: float | None
    latency_score: float | None
    reliability_score: float | None
    cost_score: float | None
    avg_latency_ms: float | None
    avg_cost_usd: float | None
    cost_source: str | None = Field(description="reported, estimated or mixed")
    scoring_policy: str
    graded_runs: int = Field(description="completed runs whose outcome is graded")
    verified_state: str | None = Field(
        description="verified (every completed run graded), partial (some), "
        "self_reported (none), null (no completed run)"
    )


class Fitness(BaseModel):
    correctness: float | None
    latency: float | None
    cost: float | None
    tool_efficiency: float | None
    robustness: float | None
    composite_score: float | None = Field(description="weighted radar mean")
    canonical_composite_score: float | None = Field(description="headline composite")
    weights: dict[str, float]
    runs_counted: int
    latency_p50_ms: float | None
    cost_p50_usd: float | None
    steps_p50: float | None
    evidence_needed: dict[str, int] = Field(
        description="for each null axis, how many more runs would give it a value"
    )


class TaskReliability(BaseModel):
    task_id: str
    n: int
    successes: int
    pass_1: float
    pass_3: float
    pass_5: float


class Reliability(BaseModel):
    pass_1: float | None
    pass_3: float | None
    pass_5: float | None
    tasks_counted: int
    tasks: list[TaskReliability]


class RunSummary(BaseModel):
    id: str
    agent_id: str
    trace_id: str
    task_id: str | None
    version: str | None = Field(
        description="the agent version the run ran (null until its root arrives)"
    )
    status: str
    success: bool | None
    success_source: str | None = Field(description="reported, graded, status or null")
    started_at: str = Field(description="the root span's start (span time)")
    ended_at: str = Field(description="the root span's end (span time)")
    terminal_at: str | None = Field(
        description="the collector's clock when the run became terminal (null while "
        "running): the time since/until select by and the radar's cohort is ordered by"
    )
    latency_ms: float | None
    steps: int | None
    llm_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    error_class: str = Field(
        description="none, timeout, http_error, bad_response_shape, connection_error or "
        "exception; any other class (free text from the spans) reads `other` without "
        "the owner's key"
    )
    span_count: int
    owner_view: bool = Field(
        description="true: shown with the owner's key (or under --insecure), every field "
        "as stored; false: the public view, error_class reduced to the fixed classes and "
        "a grade's expected_output and output withheld (null)"
    )
    screening_id: str | None = Field(
        default=None, description="the screening the run was part of (docs/screening.md)"
    )
    unrecognised_spans: int | None = Field(
        default=None,
        description="spans of the run no convention recognised (role `other`, the root "
        "excepted): a count of 0 steps may hide tools the collector could not see; null "
        "for runs stored before conventions (docs/conventions.md)",
    )
    conventions_digest: str | None = Field(
        default=None,
        description="digest of the convention files the run's spans were classified "
        "under (`badge-collector conventions list` prints the active one)",
    )
    steps_source: Literal["spans", "requested"] | None = Field(
        default=None,
        description="where `steps` came from: `spans` (counted tool spans) or `requested` "
        "(the run has no tool span; its steps are the tool calls its LLM calls requested, "
        "for instrumentations that trace only the model); null when `steps` is null, and "
        "for runs stored before the field (docs/runs.md)",
    )
    sealed: bool = Field(
        default=False,
        description="true when retention removed spans of the run's trace: the run keeps "
        "the counts it had when they were removed, and new convention files do not "
        "recount it (docs/conventions.md)",
    )


class RunList(Page):
    items: list[RunSummary]


class ToolCall(BaseModel):
    name: str
    span_id: str
    started_at: str
    duration_ms: float
    status: str


class Grade(BaseModel):
    success: bool | None
    score: float | None
    expected_output: str | None = Field(description="the owner's key only (null without it)")
    output: str | None = Field(
        description="what the grader saw, or the evaluation's explanation; the owner's "
        "key only (null without it)"
    )
    error_class: str | None = Field(
        description="as the grader wrote it with the owner's key; without it one of the "
        "fixed classes or `other`"
    )
    graded_at: str = Field(description="when it was graded (RFC 3339)")


class RunDetail(RunSummary):
    tool_calls: list[ToolCall] = Field(
        description="the first tool steps in order (at most 100; the rest through "
        "/runs/{id}/tool-calls)"
    )
    tool_calls_next_cursor: str | None = Field(
        default=None, description="where /runs/{id}/tool-calls goes on; null: all shown"
    )
    grade: Grade | None = Field(
        description="a posted grade, or what the run's evaluation event or grader "
        "spans said; null for an ungraded run"
    )


class ToolCallList(Page):
    items: list[ToolCall] = Field(
        description="tool steps in order; a run keeps its first 1,000 (`steps` counts all)"
    )


class Trace(BaseModel):
    run_id: str
    trace_id: str
    spans: list[dict[str, Any]] = Field(
        description="span tree: span_id, parent_span_id, name, kind, start, end, status, "
        "attributes, events, classification, children. `classification`: role, rule (the "
        "convention rule that decided, as `convention:role[index]`), convention, "
        "rule_role, rule_index, unrecognised, counted, reason, root, clock, ignored"
    )
    truncated: bool


class RadarWeights(BaseModel):
    weights: dict[str, float] = Field(
        description="axis -> weight: finite, non-negative; axes not named get 0"
    )


class SavedWeights(RadarWeights):
    saved: bool = Field(description="false: no weights saved, these are the defaults")


class GradeAccepted(BaseModel):
    agent: str
    run_key: str
    success: bool
    graded_at: str = Field(description="when the grade was stored (RFC 3339)")
    run_ids: list[str] = Field(
        description="stored runs graded now; empty: the grade waits for its run's spans"
    )
