"""Build SpanFacts trees through the real ingest-time recognition (the
built-in conventions) and facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collector.assembly.facts import SpanFacts, resource_facts, span_facts
from collector.assembly.runs import Run, Timers, assemble_trace
from collector.conventions import ConventionSet, builtin_set
from proto import WireEvent

TRACE = "ab" * 16
# Span times and the collector's clock as the tests write them (start 0, now
# 100 s) are moved to a real date: times before 2000 are impossible times
# (collector/assembly/clock.py) and would set the run's latency aside.
EPOCH_S = 1_790_000_000
EPOCH_NS = EPOCH_S * 10**9


@dataclass
class Tree:
    spans: list[SpanFacts] = field(default_factory=list)
    _next: int = 1
    conventions: ConventionSet = field(default_factory=builtin_set)

    def add(
        self,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        parent: str = "",
        start: int = 0,
        end: int = 1_000_000,
        status: int = 0,
        flags: int = 0,
        agent: str = "agent-1",
        resource: dict[str, Any] | None = None,
        exception: str | None = None,
        received_at: float = 100.0,
        grader: bool = False,
        events: tuple[WireEvent, ...] = (),
        kind: int = 1,
        scope: str = "",
    ) -> str:
        span_id = f"{self._next:016x}"
        self._next += 1
        lifted = list(events)
        if exception is not None:
            lifted.insert(0, WireEvent("exception", start, {"exception.type": exception}))
        attributes, resource = attrs or {}, resource or {}
        found = self.conventions.recognizer.recognise(
            name, kind, status, scope, attributes, resource
        )
        facts = span_facts(found, name, attributes, resource_facts(resource), lifted)
        self.spans.append(
            SpanFacts(
                span_id,
                parent,
                agent,
                name,
                EPOCH_NS + start,
                EPOCH_NS + end,
                status,
                flags,
                EPOCH_S + received_at,
                grader,
                found.role,
                found.label,
                facts,
            )
        )
        return span_id

    def runs(self, now: float = 100.0, timers: Timers | None = None) -> list[Run]:
        return assemble_trace(TRACE, self.spans, EPOCH_S + now, timers or Timers())

    def run(self, now: float = 100.0, timers: Timers | None = None) -> Run:
        found = self.runs(now, timers)
        assert len(found) == 1, found
        return found[0]


def genai_agent(tree: Tree, root: str) -> str:
    return tree.add("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, parent=root)
