"""`badge-collector demo`: realistic agent traffic through the real OTel SDK.

A few agents, several tasks, repeated rounds, tool calls, LLM usage and some
failures, exported over OTLP/HTTP exactly as an instrumented agent would.
Span times are set explicitly, so the demo takes seconds, not minutes.

support-bot runs in two versions: 1.5.0 adds a slow self-check to every LLM
call and often gets refunds wrong, so `badge-collector compare support-bot`
flags it and `badge-collector diagnose support-bot --version 1.5.0` points
at the runs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import TYPE_CHECKING

from collector.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

AGENTS = {
    # support-bot is screened on a suite of ten tasks, the size compare needs
    # to test a version against the last one task by task (docs/loop.md).
    "support-bot": (
        [
            "order-status",
            "refund",
            "greeting",
            "shipping",
            "cancel-order",
            "change-address",
            "invoice",
            "warranty",
            "track-package",
            "password-reset",
        ],
        0.85,
        3,
    ),
    "research-agent": (["summarise", "compare", "cite", "lookup"], 0.7, 6),
    "coder": (["fix-bug", "write-test", "refactor", "explain"], 0.55, 9),
}
# agent -> its versions, oldest first: (version, LLM latency factor, task that breaks)
VERSIONS: dict[str, list[tuple[str, float, str | None]]] = {
    "support-bot": [("1.4.0", 1.0, None), ("1.5.0", 3.0, "refund")],
    "research-agent": [("2.1.0", 1.0, None)],
    "coder": [("0.9.0", 1.0, None)],
}


def run_demo(args: argparse.Namespace, settings: Settings) -> int:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        print("error: the demo needs `pip install badge-collector[demo]`", file=sys.stderr)
        return 2
    endpoint = (args.endpoint or f"http://127.0.0.1:{settings.http_port}").rstrip("/")
    key = args.key or _demo_key(settings)
    rnd = random.Random(42)
    base = time.time_ns() - 3600 * 10**9
    sent = 0
    for name, (tasks, skill, tool_budget) in AGENTS.items():
        for version, slower, breaks in VERSIONS[name]:
            resource = Resource.create({"service.name": name, "service.version": version})
            provider = TracerProvider(resource=resource)
            exporter = OTLPSpanExporter(
                endpoint=f"{endpoint}/v1/traces", headers={"authorization": f"Bearer {key}"}
            )
            provider.add_span_processor(BatchSpanProcessor(exporter))
            tracer = provider.get_tracer("badge.demo")
            later_broken = {b for _, _, b in VERSIONS[name] if b is not None}
            for _ in range(args.rounds):
                for number, task in enumerate(tasks):
                    base += rnd.randint(1, 5) * 10**9
                    # a task a later version breaks was reliable before it
                    odds = 0.2 if task == breaks else 1.0 if task in later_broken else skill
                    # each task needs its own number of tools, now and then one more
                    steps = min(tool_budget, number % (tool_budget + 1) + (rnd.random() < 0.2))
                    _one_run(tracer, rnd, task, odds, steps, base, slower)
                    sent += 1
            provider.shutdown()
    print(
        f"sent {sent} runs of {len(AGENTS)} agents to {endpoint}; "
        f"see `badge-collector agents` or {endpoint}/api/v1/agents"
    )
    return 0


def _one_run(
    tracer: Tracer,
    rnd: random.Random,
    task: str,
    skill: float,
    steps: int,
    start: int,
    slower: float = 1.0,
) -> None:
    from opentelemetry.trace import Status, StatusCode

    ok = rnd.random() < skill
    t = start
    root = tracer.start_span(
        "badge.run",
        start_time=t,
        attributes={"badge.task.id": task, "badge.run.success": ok},
    )
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    agent = tracer.start_span(
        "invoke_agent",
        context=ctx,
        start_time=t,
        attributes={"gen_ai.operation.name": "invoke_agent"},
    )
    actx = trace.set_span_in_context(agent)
    for turn in range(steps + 1):
        llm_ms = int(rnd.randint(200, 1500) * slower)
        chat = tracer.start_span(
            "chat gpt-4.1-mini",
            context=actx,
            start_time=t,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4.1-mini",
                "gen_ai.usage.input_tokens": rnd.randint(200, 2000),
                "gen_ai.usage.output_tokens": rnd.randint(10, 300),
            },
        )
        t += llm_ms * 10**6
        chat.end(end_time=t)
        if turn < steps:
            tool_ms = rnd.randint(20, 800)
            tool = tracer.start_span(
                f"execute_tool tool_{turn % 3}",
                context=actx,
                start_time=t,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": f"tool_{turn % 3}",
                },
            )
            t += tool_ms * 10**6
            if rnd.random() < 0.1:
                tool.set_status(Status(StatusCode.ERROR, "tool failed"))
            tool.end(end_time=t)
    agent.end(end_time=t)
    if not ok and rnd.random() < 0.3:
        root.set_status(Status(StatusCode.ERROR, "agent raised"))
    root.end(end_time=t + 10**6)


def _demo_key(settings: Settings) -> str:
    from collector.storage.engine import describe, open_existing
    from collector.storage.keys import KeyStore
    from collector.storage.migrate import create_schema

    db = open_existing(settings.database_url, synchronous=settings.sqlite_synchronous)
    print(f"database: {describe(settings.database_url)}", file=sys.stderr)
    create_schema(db)
    key = KeyStore(db).create("demo")
    db.dispose()
    return key
