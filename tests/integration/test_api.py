"""The read API end to end: spans in through the doors, numbers out of scoring."""

from __future__ import annotations

import base64
import random
from typing import Any

import pytest

import scoring
from bench.support.otlp import EPOCH_NS, agent_run, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, wait_for

API = "/api/v1"


def run_trace(
    task: str,
    *,
    success: bool = True,
    latency_ns: int = 161_560_000,
    cost: float | None = 0.0029267,
    tools: int = 1,
    service: str = "worked-agent",
    error: bool = False,
) -> bytes:
    """The worked example's run by default (docs/scoring.md): 161.56 ms, $0.0029267."""
    return agent_run(
        task,
        service=service,
        success=success,
        latency_ns=latency_ns,
        cost=cost,
        tools=tools,
        error=error,
    ).SerializeToString()


def agent_id(c: Collector, name: str) -> str:
    rows = c.query("SELECT id FROM agents WHERE name = ?", name)
    return str(rows[0][0])


def completed_runs(c: Collector, expected: int) -> None:
    c.settle()
    wait_for(
        lambda: c.query("SELECT count(*) FROM runs WHERE status='completed'")[0][0] >= expected
    )


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_worked_example_through_the_api(collector: Collector) -> None:
    for i in range(9):
        body = run_trace(f"t{i % 3}")
        if i % 2:
            assert collector.post(body).status_code == 200
        else:
            collector.export_grpc(body)
    completed_runs(collector, 9)
    ident = agent_id(collector, "worked-agent")
    stats = get(collector, f"/agents/{ident}/stats")
    assert stats["composite_score"] == 98.72
    assert stats["completed_runs"] == stats["successful_runs"] == 9
    assert stats["cost_score"] == 0.9572
    assert stats["cost_source"] == "reported"
    assert stats["scoring_policy"] == "2026-07-zero-success-v1"
    fitness = get(collector, f"/agents/{ident}/fitness")
    assert fitness["composite_score"] == 100.0
    assert fitness["canonical_composite_score"] == 98.72
    assert fitness["steps_p50"] == 1
    reliability = get(collector, f"/agents/{ident}/reliability")
    # three tasks of three successful runs each; pass^5 is 0 where c < k (docs/scoring.md "pass^k")
    assert (reliability["pass_1"], reliability["pass_3"], reliability["pass_5"]) == (1.0, 1.0, 0.0)
    assert reliability["tasks_counted"] == 3
    leaderboard = get(collector, "/agents")
    assert leaderboard["items"][0]["composite_score"] == 98.72


def test_numbers_equal_the_scoring_core_on_the_same_runs(collector: Collector) -> None:
    rnd = random.Random(5)
    total = 40
    for _ in range(total):
        body = run_trace(
            f"task-{rnd.randint(0, 4)}",
            success=rnd.random() > 0.35,
            latency_ns=rnd.randint(100, 12_000) * 1_000_000,
            cost=rnd.choice([None, rnd.random() / 10]),
            tools=rnd.randint(0, 8),
            service="mixed-agent",
            error=rnd.random() < 0.1,
        )
        assert collector.post(body).status_code == 200
    completed_runs(collector, total)
    ident = agent_id(collector, "mixed-agent")
    records = collector.service.read.reads.all_runs(ident)
    assert len(records) == total
    expected = scoring.composite(records)
    assert expected is not None
    stats = get(collector, f"/agents/{ident}/stats")
    assert stats["composite_score"] == expected.composite_score
    assert stats["success_rate"] == round(expected.success_rate, 4)
    assert stats["avg_latency_ms"] == pytest.approx(expected.avg_latency_ms, rel=1e-12)
    assert stats["avg_cost_usd"] == pytest.approx(expected.avg_cost_usd, rel=1e-12)
    radar = scoring.radar(records, {"correctness": 2, "latency": 1})
    fitness = get(collector, f"/agents/{ident}/fitness", weights="correctness:2,latency:1")
    for axis in (
        "correctness",
        "latency",
        "cost",
        "tool_efficiency",
        "robustness",
        "composite_score",
        "runs_counted",
        "steps_p50",
    ):
        assert fitness[axis] == getattr(radar, axis), axis
    repeat = scoring.pass_k(records)
    reliability = get(collector, f"/agents/{ident}/reliability")
    assert reliability["pass_3"] == pytest.approx(repeat.pass_3)
    assert reliability["tasks_counted"] == repeat.tasks_counted


def test_run_list_pages_newest_first_and_filters(collector: Collector) -> None:
    for i in range(7):
        collector.post(run_trace("paged" if i % 2 else "other", service="pager"))
    completed_runs(collector, 7)
    ident = agent_id(collector, "pager")
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"agent_id": ident, "page_size": 3}
        if cursor:
            params["cursor"] = cursor
        page = get(collector, "/runs", **params)
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 7 and len({r["id"] for r in seen}) == 7
    keys = [(r["started_at"], r["id"]) for r in seen]
    assert keys == sorted(keys, reverse=True)
    only = get(collector, "/runs", agent_id=ident, task_id="paged")["items"]
    assert {r["task_id"] for r in only} == {"paged"} and len(only) == 3
    assert get(collector, "/runs", agent_id="not-an-agent")["items"] == []
    detail = get(collector, f"/runs/{seen[0]['id']}")
    assert detail["steps"] == 1
    assert detail["tool_calls"][0]["name"] == "t0"
    assert detail["tool_calls"][0]["status"] == "unset"
    # how its spans were recognised (CONVENTIONS.md sections 4 and 6)
    assert detail["conventions_digest"] == collector.service.conventions.digest
    assert detail["unrecognised_spans"] == 0
    assert detail["steps_source"] == "spans"


def client_only_run(task: str) -> bytes:
    """A tool loop of the user's own with only the model client traced: no
    tool span; each chat span says, in its output, which calls the model
    requested, and its input repeats the earlier turns' calls (OpenLLMetry's
    indexed keys on the second call, GenAI messages on the first)."""
    trace_id, root = new_trace_id(), new_span_id()
    first_answer = (
        '[{"role": "assistant", "parts": ['
        '{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {}},'
        '{"type": "tool_call", "id": "c2", "name": "get_time", "arguments": {}}]}]'
    )
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    spans = [
        span(trace_id, root, "badge.run", attributes={"badge.task.id": task}),
        span(
            trace_id,
            new_span_id(),
            "chat m",
            parent=root,
            attributes={**chat, "gen_ai.output.messages": first_answer},
        ),
        span(
            trace_id,
            new_span_id(),
            "openai.chat",
            parent=root,
            start=EPOCH_NS + 1_500_000_000,
            attributes={
                **chat,
                "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
                "gen_ai.prompt.1.tool_calls.1.name": "get_time",
                "gen_ai.completion.0.tool_calls.0.name": "convert",
                "gen_ai.completion.0.tool_calls.0.id": "c3",
            },
        ),
    ]
    return request(spans, service="client-only").SerializeToString()


def test_a_run_without_tool_spans_shows_the_calls_its_model_requested(
    collector: Collector,
) -> None:
    collector.post(client_only_run("requested"))
    completed_runs(collector, 1)
    ident = agent_id(collector, "client-only")
    run = get(collector, "/runs", agent_id=ident)["items"][0]
    assert (run["steps"], run["steps_source"], run["llm_calls"]) == (3, "requested", 2)
    detail = get(collector, f"/runs/{run['id']}")
    assert [c["name"] for c in detail["tool_calls"]] == ["get_weather", "get_time", "convert"]


def test_trace_read_needs_the_owners_key(collector: Collector) -> None:
    collector.post(run_trace("t", service="private"))
    completed_runs(collector, 1)
    run_id = collector.query("SELECT id FROM runs")[0][0]
    url = f"{collector.http_url}{API}/runs/{run_id}/trace"
    assert collector.http.get(url).status_code == 401
    other = collector.service.keys.create("someone-else")
    assert collector.http.get(url, headers={"authorization": f"Bearer {other}"}).status_code == 403
    reply = collector.http.get(url, headers={"x-api-key": collector.key})
    assert reply.status_code == 200
    tree = reply.json()
    assert tree["truncated"] is False
    root = tree["spans"][0]
    assert root["name"] == "badge.run" and root["classification"]["root"] is True
    agent = root["children"][0]
    roles = sorted(c["classification"]["role"] for c in agent["children"])
    assert roles == ["llm", "tool"]
    how = agent["classification"]
    assert (how["rule"], how["convention"], how["rule_role"], how["rule_index"]) == (
        "genai:agent[0]",
        "genai",
        "agent",
        0,
    )
    assert how["unrecognised"] is False
    assert root["classification"]["unrecognised"] is False  # the root never is
    assert root["attributes"]["badge.task.id"] == "t"


def test_delete_agent_is_owner_only_and_refuses_later_spans(collector: Collector) -> None:
    collector.post(run_trace("t", service="doomed"))
    completed_runs(collector, 1)
    ident = agent_id(collector, "doomed")
    url = f"{collector.http_url}{API}/agents/{ident}"
    assert collector.http.delete(url).status_code == 401
    other = collector.service.keys.create("intruder")
    assert (
        collector.http.delete(url, headers={"authorization": f"Bearer {other}"}).status_code == 403
    )
    assert (
        collector.http.delete(url, headers={"authorization": f"Bearer {collector.key}"}).status_code
        == 204
    )
    assert collector.http.get(url).status_code == 404
    assert all(a["id"] != ident for a in get(collector, "/agents", all="true")["items"])
    reply = collector.post(run_trace("t", service="doomed"))
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    partial = ExportTraceServiceResponse.FromString(reply.content).partial_success
    assert partial.rejected_spans == 4 and "agent deleted" in partial.error_message
    assert collector.query("SELECT count(*) FROM runs WHERE agent_id = ?", ident) == [(1,)]


def test_errors_are_json_detail(collector: Collector) -> None:
    base = f"{collector.http_url}{API}"
    assert collector.http.get(f"{base}/agents/not-a-uuid").status_code == 404
    missing = collector.http.get(f"{base}/agents/00000000-0000-0000-0000-000000000000/stats")
    assert missing.status_code == 404 and missing.json() == {"detail": "unknown agent"}
    assert collector.http.get(f"{base}/runs/nope").status_code == 404
    collector.post(run_trace("t", service="weights"))
    completed_runs(collector, 1)
    ident = agent_id(collector, "weights")
    bad = collector.http.get(f"{base}/agents/{ident}/fitness", params={"weights": "speed:1"})
    assert bad.status_code == 422 and "unknown axis" in bad.json()["detail"]
    assert collector.http.get(f"{base}/agents", params={"page_size": 0}).status_code == 422
    assert collector.http.get(f"{base}/runs", params={"cursor": "!!"}).status_code == 422
    assert collector.http.get(f"{base}/agents", params={"bogus": 1}).status_code == 200
    for url in (f"{base}/runs/a%00b", f"{base}/runs?agent_id=%00"):  # SQL text has no NUL
        nul = collector.http.get(url)
        assert nul.status_code == 400 and "NUL" in nul.json()["detail"]


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/runs", {"cursor": base64.urlsafe_b64encode(b"99999999999999999999:x").decode()}),
        ("/runs", {"cursor": base64.urlsafe_b64encode("²:ab".encode()).decode()}),
        ("/runs", {"cursor": base64.urlsafe_b64encode(b"1" * 5_000 + b":ab").decode()[:200]}),
        ("/runs", {"cursor": "²"}),
        ("/runs", {"cursor": "A" * 5_000}),
        ("/agents", {"cursor": base64.urlsafe_b64encode("²".encode()).decode()}),
        ("/agents", {"cursor": base64.urlsafe_b64encode(b"9" * 5_000).decode()}),
    ],
)
def test_malformed_cursors_are_422_with_a_string_detail(
    collector: Collector, path: str, params: dict[str, str]
) -> None:
    reply = collector.http.get(f"{collector.http_url}{API}{path}", params=params)
    assert reply.status_code == 422, reply.text
    assert isinstance(reply.json()["detail"], str) and "cursor" in reply.json()["detail"]


def test_the_largest_finite_weights_are_valid(collector: Collector) -> None:
    """docs/scoring.md "The fitness radar": any finite weight >= 0; only the ratio counts."""
    collector.post(run_trace("t", service="heavy"))
    completed_runs(collector, 1)
    ident = agent_id(collector, "heavy")
    huge = get(collector, f"/agents/{ident}/fitness", weights="correctness:1e308,latency:1e308")
    plain = get(collector, f"/agents/{ident}/fitness", weights="correctness:1,latency:1")
    assert huge["composite_score"] == plain["composite_score"] is not None
    assert huge["weights"] == plain["weights"]


def test_validation_errors_are_one_string_like_every_other_error(collector: Collector) -> None:
    reply = collector.http.get(f"{collector.http_url}{API}/agents", params={"page_size": 0})
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("query.page_size: ")


def test_a_405_names_every_method_the_path_takes(collector: Collector) -> None:
    url = f"{collector.http_url}{API}/agents/00000000-0000-0000-0000-000000000000"
    reply = collector.http.request("OPTIONS", url)
    assert reply.status_code == 405
    assert reply.headers["allow"] == "DELETE, GET, HEAD"  # HEAD wherever GET answers
    assert reply.json() == {"detail": "Method Not Allowed"}


def test_runs_carry_their_version_and_filter_by_it(collector: Collector) -> None:
    """The root's badge.agent.version, else the resource's service.version."""
    for i in range(3):
        message = agent_run(f"t{i}", service="versioned")
        message.resource_spans[0].resource.attributes.add(
            key="service.version"
        ).value.string_value = "1.0.0"
        if i == 2:
            root = message.resource_spans[0].scope_spans[0].spans[0]
            root.attributes.add(key="badge.agent.version").value.string_value = "2.0.0"
        assert collector.post(message.SerializeToString()).status_code == 200
    completed_runs(collector, 3)
    ident = agent_id(collector, "versioned")
    every = get(collector, "/runs", agent_id=ident)["items"]
    assert sorted(r["version"] for r in every) == ["1.0.0", "1.0.0", "2.0.0"]
    newer = get(collector, "/runs", agent_id=ident, version="2.0.0")["items"]
    assert [(r["task_id"], r["version"]) for r in newer] == [("t2", "2.0.0")]
    assert get(collector, "/runs", agent_id=ident, version="9")["items"] == []
    assert get(collector, f"/runs/{newer[0]['id']}")["version"] == "2.0.0"


def test_leaderboard_hides_services_without_agent_runs(collector: Collector) -> None:
    trace_id = new_trace_id()
    plain = request([span(trace_id, new_span_id(), "SELECT users")], "postgres-db")
    collector.post(plain.SerializeToString())
    collector.post(run_trace("t", service="real-agent"))
    completed_runs(collector, 2)
    names = [a["name"] for a in get(collector, "/agents")["items"]]
    assert names == ["real-agent"]
    everything = [a["name"] for a in get(collector, "/agents", all="true")["items"]]
    assert sorted(everything) == ["postgres-db", "real-agent"]


def test_health_endpoints(collector: Collector) -> None:
    assert collector.http.get(f"{collector.http_url}/healthz").json() == {"status": "ok"}
    assert collector.http.get(f"{collector.http_url}/readyz").status_code == 200
    metrics = collector.http.get(f"{collector.http_url}/metrics").text
    assert "badge_runs_finalised" in metrics
