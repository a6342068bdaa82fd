"""What the read API needs from a store, as Protocols the collector implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scoring import Composite, RunRecord


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is reading: an owner (from a key), or nobody."""

    owner: str | None
    all_access: bool = False  # --insecure: every read is open


@dataclass(frozen=True, slots=True)
class AgentRow:
    id: str
    owner: str
    name: str
    first_seen_at: float
    last_run_at: float | None
    total_runs: int
    composite_score: float | None


@dataclass(frozen=True, slots=True)
class RunCounts:
    total: int
    completed: int
    successful: int
    failed: int
    timeout: int
    running: int
    cost_sources: frozenset[str]


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run summary as API.md lists its fields (times as epoch seconds)."""

    id: str
    agent_id: str
    trace_id: str
    task_id: str | None
    status: str
    success: bool | None
    success_source: str | None
    started_at: float
    ended_at: float
    latency_ms: float | None
    steps: int | None
    llm_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    error_class: str
    span_count: int
    tool_calls: Sequence[dict[str, Any]] = ()


class ReadStore(Protocol):
    def ready(self) -> bool: ...

    def agents(self, *, include_all: bool) -> list[AgentRow]: ...

    def agent(self, agent_id: str) -> AgentRow | None: ...

    def delete_agent(self, agent_id: str) -> None: ...

    def run_counts(self, agent_id: str) -> RunCounts: ...

    def composite(self, agent_id: str) -> Composite | None: ...

    def radar_runs(self, agent_id: str) -> list[RunRecord]: ...

    def repeatability_runs(self, agent_id: str) -> list[RunRecord]: ...

    def runs(
        self,
        *,
        agent_id: str | None,
        task_id: str | None,
        status: str | None,
        after: tuple[int, str] | None,
        limit: int,
    ) -> list[RunRow]: ...

    def run(self, run_id: str) -> tuple[RunRow, str] | None: ...

    def trace(self, run_id: str, max_spans: int) -> tuple[list[dict[str, Any]], bool]: ...


class KeyStore(Protocol):
    def owner_of(self, key: str) -> str | None: ...
