"""Two real screenings of one suite for the dashboard's tests: `badge-collector screen`
(a child process, as a user runs it) against a small instrumented HTTP agent.

The agent is tests/screening_agent.py's (Starlette behind OpenTelemetry's ASGI
middleware, GenAI spans through the real SDK exporter), with a variant the
test switches between the screenings: version 1.1.0 answers two tasks wrongly,
fails a third with HTTP 500 and is slower. A second agent, evil-bot, is
screened twice with hostile markup in a task's answer, a task's id, a version
and one of its span names.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from opentelemetry import baggage
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bench.support.otlp import new_span_id, new_trace_id, request, span
from bench.support.servers import cli
from tests.dashboard.conftest import Live
from tests.screening_agent import Calls, act, serving

AGENT = "shop-bot"
HOSTILE_AGENT = "evil-bot"
ROUNDS = 3
# Every context a string can land in: element text, an attribute, a URL, SVG.
PAYLOAD = (
    "<script>window.__pwned='script'</script>"
    "<a href=\"javascript:window.__pwned='link'\">click</a>"
    "<svg onload=\"window.__pwned='svg'\"><circle r='9'/></svg>"
    "\"'><img src=x onerror=\"window.__pwned='img'\"> & your refund issued"
)
HOSTILE_TASK = "q\"'><svg onload=\"window.__pwned='task'\">"
HOSTILE_VERSION = '2.0"><img src=x onerror="window.__pwned=\'version\'">'
# Not one `screen` accepts, but any span may name it: it must still be addressable.
HOSTILE_SCREENING = 'e"><svg onload="window.__pwned=\'id\'">?#&x=1 %2e'
TASKS: list[dict[str, Any]] = [
    {
        "id": "refund",
        "prompt": "Refund order 17",
        "expected_output": "Your refund was issued today",
        "metadata": {"answer": "Your refund issued today.", "tools": ["lookup", "refund"]},
    },
    {
        "id": "hours",
        "prompt": "When are you open?",
        "expected_output": "We open at nine and close at five",
        "metadata": {"answer": "We open at nine.", "tools": []},
    },
    {
        "id": "greet",
        "prompt": "Say hello",
        "expected_output": "hello",
        "metadata": {"answer": "hello there", "tools": [], "wrong_in_rounds": [2]},
    },
    {
        "id": "track",
        "prompt": "Where is my parcel?",
        "metadata": {"answer": "on its way", "tools": ["track", "eta"]},
    },
    {
        "id": "ship",
        "prompt": "Has order 9 shipped?",
        "expected_output": "order 9 has shipped",
        "metadata": {"answer": "Yes: order 9 has shipped.", "tools": ["lookup"]},
    },
    {
        "id": "stock",
        "prompt": "Is the blue mug in stock?",
        "expected_output": "in stock",
        "metadata": {"answer": "The blue mug is in stock.", "tools": ["inventory"]},
    },
    {
        "id": "outage",
        "prompt": "Check the warehouse",
        "expected_output": "all good",
        "metadata": {"answer": "all good", "tools": [], "status": 500},
    },
]


HOSTILE_TASKS: list[dict[str, Any]] = [
    {
        "id": HOSTILE_TASK,
        "prompt": "Answer with <b>markup</b>",
        "expected_output": "your refund issued",
        "metadata": {"answer": PAYLOAD, "tools": ["lookup"]},
    },
    {
        "id": "plain",
        "prompt": "Say hello",
        "expected_output": "hello",
        "metadata": {"answer": "hello", "tools": []},
    },
]


@dataclass
class Variant:
    """How the agent behaves in the screening under way."""

    wrong: set[str] = field(default_factory=set)  # tasks answered wrongly
    failing: set[str] = field(default_factory=set)  # tasks answered with HTTP 500
    delay_s: float = 0.0


@dataclass
class Screenings:
    agent_id: str
    hostile_agent_id: str  # evil-bot's: screenings evil-1 and evil-2
    grader: str  # the grader key the screenings were recorded with
    first: dict[str, Any]  # GET .../screenings/shop-1
    second: dict[str, Any]  # GET .../screenings/shop-2


def agent_app(collector_url: str, key: str | None) -> tuple[Any, Variant]:
    """The shop's backend: its spans name their own service and one hostile span name."""
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-backend"}))
    headers = {"authorization": f"Bearer {key}"} if key else {}
    exporter = OTLPSpanExporter(endpoint=f"{collector_url}/v1/traces", headers=headers)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("dashboard-test-agent")
    variant, calls = Variant(), Calls()

    def work(task: str, prompt: str, metadata: dict[str, Any], run_key: str) -> str:
        hostile = task == HOSTILE_TASK
        name, note = (f"plan {PAYLOAD[:40]}", PAYLOAD) if hostile else ("plan", "")
        with tracer.start_as_current_span(name, attributes={"note": note}):
            return act(tracer, prompt, metadata, run_key, calls)

    async def run(request: Request) -> Response:
        body = await request.json()
        task, metadata = body["task_id"], dict(body.get("metadata") or {})
        if task in variant.wrong:
            metadata["answer"] = "I do not know."
        run_key = str(baggage.get_baggage("badge.run.id") or "")
        output = await asyncio.to_thread(work, task, body["prompt"], metadata, run_key)
        await asyncio.sleep(variant.delay_s)
        status = 500 if task in variant.failing else int(metadata.get("status", 200))
        return JSONResponse({"output": output, "input_tokens": 80, "output_tokens": 24}, status)

    app = Starlette(routes=[Route("/run", run, methods=["POST"])])
    return OpenTelemetryMiddleware(app, tracer_provider=provider), variant


def screen(
    collector: str,
    suite: Path,
    url: str,
    key: str | None,
    version: str,
    screening: str,
    agent: str = AGENT,
) -> None:
    """`badge-collector screen`, as a user runs it; no key: a collector under --insecure."""
    done = cli(
        "screen",
        agent,
        "--suite",
        str(suite),
        "--endpoint",
        f"{url}/run",
        "--version",
        version,
        "--screening-id",
        screening,
        "--url",
        collector,
        *(["--key", key] if key else []),
        "--settle",
        "1",
        check=False,
    )
    assert done.returncode == 0, done.stderr


def write_suite(
    folder: Path, tasks: list[dict[str, Any]], rounds: int = ROUNDS, name: str = "shop"
) -> Path:
    suite = folder / f"{name}.yaml"
    suite.write_text(yaml.safe_dump({"name": name, "rounds": rounds, "tasks": tasks}))
    return suite


def screened(live: Live, folder: Path) -> Screenings:
    """Screenings shop-1 (version 1.0.0) and shop-2 (1.1.0, worse) of one suite, and
    evil-bot's evil-1 and evil-2 (one round each)."""
    grader = cli(
        "keys", "create", "--owner", "demo", "--role", "grader", "--database-url", live.database_url
    ).stdout.strip()
    suite = write_suite(folder, TASKS)
    app, variant = agent_app(live.url, live.key)
    with serving(app) as url:
        screen(live.url, suite, url, grader, "1.0.0", "shop-1")
        variant.wrong, variant.failing, variant.delay_s = {"refund", "ship"}, {"track"}, 0.05
        screen(live.url, suite, url, grader, "1.1.0", "shop-2")
        evil = write_suite(folder, HOSTILE_TASKS, rounds=1, name="evil")
        screen(live.url, evil, url, grader, "1.0.0", "evil-1", HOSTILE_AGENT)
        screen(live.url, evil, url, grader, HOSTILE_VERSION, "evil-2", HOSTILE_AGENT)
    post_hostile_screening(live)
    agent_id, hostile = live.agent(AGENT)["id"], live.agent(HOSTILE_AGENT)["id"]
    first, second = (complete(live, agent_id, s, len(TASKS) * ROUNDS) for s in ("shop-1", "shop-2"))
    for screening in ("evil-1", "evil-2", HOSTILE_SCREENING):
        complete(live, hostile, screening, 1 if screening == HOSTILE_SCREENING else 2)
    return Screenings(agent_id, hostile, grader, first, second)


def complete(live: Live, agent_id: str, screening: str, runs: int) -> dict[str, Any]:
    """The screening's document once all its runs have completed."""
    deadline = time.monotonic() + 30
    while True:
        path = f"/agents/{agent_id}/screenings/{quote(screening, safe='')}"
        document: dict[str, Any] = live.api(path)
        if document["completed_runs"] == runs:
            return document
        assert time.monotonic() < deadline, f"{screening}: its runs did not complete"
        time.sleep(0.2)


def post_hostile_screening(live: Live) -> None:
    """One run of evil-bot whose root names HOSTILE_SCREENING, sent as raw OTLP."""
    trace_id, root, now = new_trace_id(), new_span_id(), time.time_ns()
    attributes = {
        "badge.task.id": "plain",
        "badge.run.id": f"{HOSTILE_SCREENING}/plain/1",
        "badge.run.success": True,
        "badge.screening.id": HOSTILE_SCREENING,
        "badge.screening.round": 1,
        "badge.suite.name": "evil",
    }
    spans = [span(trace_id, root, "badge.run", start=now - 10**8, end=now, attributes=attributes)]
    reply = live.http.post(
        f"{live.url}/v1/traces",
        content=request(spans, HOSTILE_AGENT).SerializeToString(),
        headers={"content-type": "application/x-protobuf", "authorization": f"Bearer {live.key}"},
    )
    assert reply.status_code == 200, reply.text
