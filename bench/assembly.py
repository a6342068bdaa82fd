"""Assembly time of one 10,000-span trace (docs/runs.md "Delivery in any order").

    python bench/assembly.py [--spans 10000] [--repeat 7]

Builds a deep agent trace through the real ingest-time classification
(agent > turns > chat + execute_tool > nested MCP spans), then times
`assemble_trace` on it and prints the median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.assembly.facts import SpanFacts, span_facts  # noqa: E402
from collector.assembly.runs import Timers, assemble_trace  # noqa: E402
from collector.conventions import builtin_set  # noqa: E402


def build(count: int) -> list[SpanFacts]:
    spans: list[SpanFacts] = []
    recognise = builtin_set().recognizer.recognise

    def add(name: str, attrs: dict[str, object], parent: str) -> str:
        span_id = f"{len(spans) + 1:016x}"
        found = recognise(name, 1, 0, "", attrs, {})
        role, rule, facts = found.role, found.label, span_facts(found, name, attrs, {})
        start = len(spans) * 1000
        spans.append(
            SpanFacts(
                span_id,
                parent,
                "agent",
                name,
                start,
                start + 500,
                0,
                0,
                1.0,
                False,
                role,
                rule,
                facts,
            )
        )
        return span_id

    root = add("badge.run", {"badge.task.id": "big", "badge.run.success": True}, "")
    agent = add("invoke_agent big", {"gen_ai.operation.name": "invoke_agent"}, root)
    turn = 0
    while len(spans) < count:
        turn += 1
        step = add(f"turn {turn}", {}, agent)
        add(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 10,
            },
            step,
        )
        tool = add(
            "execute_tool search",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.id": f"c{turn}",
            },
            step,
        )
        add(
            "tools/call search",
            {"mcp.method.name": "tools/call", "gen_ai.tool.name": "search"},
            tool,
        )
    return spans[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    spans = build(args.spans)
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        runs = assemble_trace("ab" * 16, spans, 2.0, Timers())
        times.append(time.perf_counter() - started)
    run = runs[0]
    print(
        f"{len(spans)} spans -> {len(runs)} run: steps {run.steps}, llm_calls "
        f"{run.llm_calls}, tokens {run.input_tokens}/{run.output_tokens}"
    )
    print(
        f"assemble_trace median {statistics.median(times) * 1000:.1f} ms "
        f"(runs: {', '.join(f'{t * 1000:.0f}' for t in times)} ms)"
    )


if __name__ == "__main__":
    main()
