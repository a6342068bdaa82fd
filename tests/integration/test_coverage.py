"""Coverage through a real collector on both databases (CONVENTIONS.md
section 6): a family no convention describes ("acme") reads as unrecognised
spans, by scope and span name, for the owner; /diagnostics and `diagnose`
warn anyone past 10%; /metrics counts them by scope once stored."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from bench.support.otlp import attrs, new_span_id, new_trace_id, span
from bench.support.servers import cli
from tests.integration.harness import Collector, running_collector, wait_for

AGENT = "acme-agent"
RUNS = 4


def acme_run(task: str | None) -> bytes:
    """A root (its own scope), a GenAI chat call and tool (recognised), and
    three spans of a tracer nobody describes: two `Tool: search`, one
    `Generation`. Without a task the agent stays off the board."""
    trace, root = new_trace_id(), new_span_id()

    def child(name: str, **values: Any) -> Span:
        return span(trace, new_span_id(), name, parent=root, attributes=values)

    scopes = {
        "harness": [
            span(trace, root, "badge.run", attributes={"badge.task.id": task} if task else {})
        ],
        "opentelemetry.instrumentation.openai": [
            child("chat m", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}),
            child(
                "execute_tool lookup",
                **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
            ),
        ],
        "acme.tracer": [child("Tool: search"), child("Generation"), child("Tool: search")],
    }
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(attrs({"service.name": AGENT}))
    for scope, spans in scopes.items():
        scope_spans = resource_spans.scope_spans.add()
        scope_spans.scope.name = scope
        scope_spans.spans.extend(spans)
    return message.SerializeToString()


def sent_runs(c: Collector) -> tuple[str, list[dict[str, Any]]]:
    for task in range(RUNS):
        assert c.post(acme_run(f"t{task}")).status_code == 200
    c.settle()
    agents = c.http.get(f"{c.http_url}/api/v1/agents").json()["items"]
    agent_id = next(a["id"] for a in agents if a["name"] == AGENT)
    owner = {"authorization": f"Bearer {c.key}"}

    def completed() -> list[dict[str, Any]] | None:
        reply = c.http.get(
            f"{c.http_url}/api/v1/runs", params={"agent_id": agent_id}, headers=owner
        )
        items: list[dict[str, Any]] = reply.json()["items"]
        done = len(items) == RUNS and all(r["status"] == "completed" for r in items)
        return items if done else None

    return agent_id, wait_for(completed)


def test_the_owner_sees_which_spans_no_convention_recognised_by_scope_and_name(
    collector: Collector,
) -> None:
    agent_id, runs = sent_runs(collector)
    assert {r["unrecognised_spans"] for r in runs} == {3}  # the root is never unrecognised
    reply = collector.http.get(
        f"{collector.http_url}/api/v1/agents/{agent_id}/coverage",
        headers={"authorization": f"Bearer {collector.key}"},
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["runs_counted"], body["spans"], body["unrecognised_spans"]) == (RUNS, 24, 12)
    assert body["unrecognised_share"] == 0.5
    acme, *others = body["scopes"]
    assert (acme["scope"], acme["spans"], acme["unrecognised_spans"]) == ("acme.tracer", 12, 12)
    assert acme["roles"] == {"other": 12} and acme["conventions"] == {}
    by_scope = {s["scope"]: s for s in others}
    openai = by_scope["opentelemetry.instrumentation.openai"]
    assert openai["roles"] == {"llm": RUNS, "tool": RUNS} and openai["unrecognised_spans"] == 0
    assert sum(openai["conventions"].values()) == 2 * RUNS
    assert body["conventions"] == openai["conventions"]  # no other scope is recognised
    assert by_scope["harness"]["unrecognised_spans"] == 0  # the roots
    pairs = [(p["scope"], p["name"], p["spans"]) for p in body["top_unrecognised"]]
    assert pairs == [("acme.tracer", "Tool: search", 8), ("acme.tracer", "Generation", 4)]
    assert {p["example_run_id"] for p in body["top_unrecognised"]} <= {r["id"] for r in runs}
    assert body["warning"] == (
        "50% of this agent's spans, from scope `acme.tracer`, were not recognised"
    )


def test_coverage_is_the_owners_as_a_trace_is(collector: Collector) -> None:
    agent_id, runs = sent_runs(collector)
    other = collector.service.keys.create("owner-b")
    url = collector.http_url
    for path in (f"/api/v1/agents/{agent_id}/coverage", f"/api/v1/runs/{runs[0]['id']}/trace"):
        assert collector.http.get(f"{url}{path}").status_code == 401
        stranger = collector.http.get(f"{url}{path}", headers={"authorization": f"Bearer {other}"})
        assert stranger.status_code == 403
        assert stranger.json()["detail"] == "this key belongs to another owner"
    unknown = "00000000-0000-4000-8000-000000000000"
    owner = {"authorization": f"Bearer {collector.key}"}
    for ident in (unknown, "not-a-uuid"):
        reply = collector.http.get(f"{url}/api/v1/agents/{ident}/coverage", headers=owner)
        assert reply.status_code == 404


def test_under_insecure_anyone_reads_coverage_and_the_agent_pages_detail(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url, insecure=True) as c:
        agent_id, _ = sent_runs(c)
        reply = c.http.get(f"{c.http_url}/api/v1/agents/{agent_id}/coverage")
        assert reply.status_code == 200 and reply.json()["unrecognised_spans"] == 12
        page = c.http.get(f"{c.http_url}/agents/{agent_id}").text
        assert 'id="coverage-scopes"' in page and 'id="coverage-form"' not in page
        assert c.http.get(f"{c.http_url}/agents/{agent_id}/coverage").status_code == 200


def test_diagnostics_and_diagnose_warn_anyone_when_a_tenth_is_unrecognised(
    collector: Collector, database_url: str
) -> None:
    agent_id, _ = sent_runs(collector)
    body = collector.http.get(f"{collector.http_url}/api/v1/agents/{agent_id}/diagnostics").json()
    warning = body["coverage_warning"]
    assert warning["scopes"] == ["acme.tracer"] and warning["unrecognised_share"] == 0.5
    assert (warning["unrecognised_spans"], warning["spans"], warning["runs_counted"]) == (12, 24, 4)
    said = cli("diagnose", AGENT, "--database-url", database_url).stdout
    assert "warning: 50% of this agent's spans, from scope `acme.tracer`, were not recognised" in (
        said
    )
    served = cli("diagnose", AGENT, "--url", collector.http_url).stdout
    assert f"/api/v1/agents/{agent_id}/coverage" in served and "acme.tracer" in served


def test_an_agent_whose_spans_are_recognised_gets_no_warning(collector: Collector) -> None:
    message = ExportTraceServiceRequest()
    trace, root = new_trace_id(), new_span_id()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(attrs({"service.name": "known-agent"}))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "opentelemetry.instrumentation.openai"
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    scope_spans.spans.extend(
        [
            span(trace, root, "badge.run", attributes={"badge.task.id": "k"}),
            span(trace, new_span_id(), "chat m", parent=root, attributes=chat),
        ]
    )
    assert collector.post(message.SerializeToString()).status_code == 200
    collector.settle()
    agents = collector.http.get(f"{collector.http_url}/api/v1/agents").json()["items"]
    agent_id = next(a["id"] for a in agents if a["name"] == "known-agent")
    body = collector.http.get(f"{collector.http_url}/api/v1/agents/{agent_id}/diagnostics").json()
    assert body["coverage_warning"] is None
    said = cli("diagnose", "known-agent", "--url", collector.http_url).stdout
    assert "warning" not in said


def test_metrics_count_unrecognised_spans_by_scope_once_stored(collector: Collector) -> None:
    sent_runs(collector)
    text = collector.http.get(f"{collector.http_url}/metrics").text
    counted = dict(re.findall(r'badge_spans_unrecognised_total\{scope="([^"]*)"\} (\S+)', text))
    # the acme spans; the parentless roots of scope `harness` are never counted
    assert counted == {"acme.tracer": f"{3.0 * RUNS}"}
