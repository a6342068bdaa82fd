"""The run record the scoring core reads, and the frozen results it returns.

Result attribute names are the API field names (docs/api.md), so the read API can
serialise them without a mapping table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

RunStatus = Literal["completed", "failed", "timeout", "running"]


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run as scoring sees it; see docs/scoring.md."""

    id: str
    status: str
    success: bool | None
    latency_ms: float | None
    cost_usd: float | None
    steps: int | None
    task_id: str | None
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class Composite:
    """The headline composite and every input it was computed from."""

    composite_score: float
    success_rate: float
    consistency: float
    latency_score: float
    reliability_score: float
    cost_score: float
    avg_latency_ms: float | None
    avg_cost_usd: float
    completed_runs: int
    successful_runs: int


@dataclass(frozen=True, slots=True)
class Radar:
    """The five-axis fitness radar over the latest terminal runs."""

    correctness: float | None
    latency: float | None
    cost: float | None
    tool_efficiency: float | None
    robustness: float | None
    composite_score: float | None
    runs_counted: int
    latency_p50_ms: float | None
    cost_p50_usd: float | None
    steps_p50: float | None
    weights: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class TaskRepeatability:
    """pass^k of one qualifying task."""

    task_id: str
    n: int
    successes: int
    pass_1: float
    pass_3: float
    pass_5: float


@dataclass(frozen=True, slots=True)
class Repeatability:
    """pass^k averaged over qualifying tasks (null when none qualifies)."""

    pass_1: float | None
    pass_3: float | None
    pass_5: float | None
    tasks_counted: int
    tasks: tuple[TaskRepeatability, ...]
