"""Graded outcomes end to end (docs/loop.md "Graded outcomes and
verified_state"): POST /api/v1/grades against a real collector and database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.support.otlp import agent_run, new_span_id, new_trace_id, request, span
from collector.assembly.membership import FLAG_HAS_IS_REMOTE
from tests.integration.harness import Collector, FakeClock, running_collector, wait_for
from tests.integration.test_api import agent_id, completed_runs

GRADES = "/api/v1/grades"
LOCAL = FLAG_HAS_IS_REMOTE  # the parent is known to be local: no root until it comes
AGENT = "graded-agent"


def grader_key(c: Collector, owner: str = "owner-a") -> str:
    return c.service.keys.create(owner, "grader")


def post_grade(c: Collector, key: str | None, body: Any) -> Any:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers["content-type"] = "application/json"
    return c.http.post(f"{c.http_url}{GRADES}", content=content, headers=headers)


def send_run(c: Collector, success: bool = True, key: str | None = None) -> str:
    """An agent run (reported outcome); returns its run key, the trace id."""
    message = agent_run("t1", service=AGENT, success=success)
    reply = c.post(message.SerializeToString(), key=key or "default")
    assert reply.status_code == 200, reply.text
    return message.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()


def run_of(c: Collector, trace_id: str) -> dict[str, Any]:
    """The run as its owner sees it: a grade's texts need the owner's key."""
    c.settle()
    [(run_id,)] = c.query("SELECT id FROM runs WHERE trace_id = ?", trace_id)
    owner = {"authorization": f"Bearer {c.key}"}
    reply = c.http.get(f"{c.http_url}/api/v1/runs/{run_id}", headers=owner)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def stats(c: Collector) -> dict[str, Any]:
    reply = c.http.get(f"{c.http_url}/api/v1/agents/{agent_id(c, AGENT)}/stats")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_a_grade_posted_before_the_spans_decides_the_run(collector: Collector) -> None:
    key = grader_key(collector)
    message = agent_run("t1", service=AGENT, success=True)
    trace_id = message.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
    reply = post_grade(
        collector,
        key,
        {
            "agent": AGENT,
            "run_key": trace_id,
            "success": False,
            "score": 0.25,
            "expected_output": "42",
            "output": "41",
            "error_class": "wrong_answer",
        },
    )
    assert reply.status_code == 202, reply.text
    assert reply.json()["run_ids"] == []  # no run yet: the grade waits
    assert collector.post(message.SerializeToString()).status_code == 200
    run = run_of(collector, trace_id)
    assert (run["success"], run["success_source"]) == (False, "graded")
    grade = run["grade"]
    assert {k: grade[k] for k in ("success", "score", "expected_output", "output")} == {
        "success": False,
        "score": 0.25,
        "expected_output": "42",
        "output": "41",
    }
    assert grade["error_class"] == "wrong_answer" and grade["graded_at"].endswith("Z")
    assert run["error_class"] == "none"  # a grade sets the outcome only


def test_a_grade_posted_after_the_spans_changes_the_run_at_once(collector: Collector) -> None:
    key = grader_key(collector)
    trace_id = send_run(collector, success=True)
    before = run_of(collector, trace_id)
    assert (before["success"], before["success_source"], before["grade"]) == (
        True,
        "reported",
        None,
    )
    reply = post_grade(collector, key, {"agent": AGENT, "run_key": trace_id, "success": False})
    assert reply.status_code == 202 and reply.json()["run_ids"] == [before["id"]]
    # visible on the answer, with no recomputation in between
    after = collector.http.get(f"{collector.http_url}/api/v1/runs/{before['id']}").json()
    assert (after["success"], after["success_source"]) == (False, "graded")
    assert after["grade"]["score"] is None
    assert stats(collector)["successful_runs"] == 0
    # the last write wins
    post_grade(collector, key, {"agent": AGENT, "run_key": trace_id, "success": True, "score": 1})
    final = run_of(collector, trace_id)
    assert (final["success"], final["grade"]["score"]) == (True, 1.0)


def test_a_grade_names_a_run_by_its_badge_run_id(collector: Collector) -> None:
    trace_id, root = new_trace_id(), new_span_id()
    spans = [span(trace_id, root, "run", attributes={"badge.run.id": "case-9"})]
    assert collector.post(request(spans, AGENT).SerializeToString()).status_code == 200
    collector.settle()
    reply = post_grade(
        collector, grader_key(collector), {"agent": AGENT, "run_key": "case-9", "success": False}
    )
    assert reply.status_code == 202 and len(reply.json()["run_ids"]) == 1
    run = run_of(collector, trace_id.hex())
    assert (run["success"], run["success_source"]) == (False, "graded")


def test_a_grade_survives_a_restart_a_late_span_and_the_timeout_sweep(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock()
    trace_id, root, child = new_trace_id(), new_span_id(), new_span_id()
    with running_collector(tmp_path, clock=clock, database_url=database_url) as c:
        orphan = span(
            trace_id, child, "tool", parent=root, attributes={"badge.task.id": "t"}, flags=LOCAL
        )
        assert c.post(request([orphan], AGENT).SerializeToString()).status_code == 200
        c.settle()
        reply = post_grade(
            c, grader_key(c), {"agent": AGENT, "run_key": trace_id.hex(), "success": True}
        )
        assert reply.status_code == 202 and len(reply.json()["run_ids"]) == 1
        running = run_of(c, trace_id.hex())
        assert (running["status"], running["success"], running["success_source"]) == (
            "running",
            True,
            "graded",
        )
        clock.advance(400)  # past run_timeout: the sweep makes it a timeout
        wait_for(lambda: c.query("SELECT status FROM runs")[0][0] == "timeout")
        timed_out = run_of(c, trace_id.hex())
        assert (timed_out["status"], timed_out["success"], timed_out["success_source"]) == (
            "timeout",
            True,
            "graded",
        )
        assert timed_out["error_class"] == "timeout"
    with running_collector(tmp_path, clock=clock, database_url=database_url) as again:
        late_root = span(trace_id, root, "root", attributes={"badge.run.success": False})
        assert again.post(request([late_root], AGENT).SerializeToString()).status_code == 200
        wait_for(lambda: again.query("SELECT status FROM runs")[0][0] == "completed")
        final = run_of(again, trace_id.hex())
        assert (final["status"], final["success"], final["success_source"]) == (
            "completed",
            True,
            "graded",
        )
        assert final["span_count"] == 2


def test_an_agent_key_cannot_grade_nor_grade_itself_through_spans(collector: Collector) -> None:
    trace_id = send_run(collector, success=True)
    body = {"agent": AGENT, "run_key": trace_id, "success": False}
    refused = post_grade(collector, collector.key, body)
    assert refused.status_code == 403 and "grader" in refused.json()["detail"]
    assert post_grade(collector, None, body).status_code == 401
    assert post_grade(collector, "bdg_unknown", body).status_code == 401
    run = run_of(collector, trace_id)
    assert (run["success"], run["success_source"]) == (True, "reported")
    # badge.run.status and badge.run.success from an agent key: not graded
    own, root = new_trace_id(), new_span_id()
    attrs = {"badge.run.status": "timeout", "badge.run.success": True}
    assert (
        collector.post(
            request([span(own, root, "r", attributes=attrs, status=2)], AGENT).SerializeToString()
        ).status_code
        == 200
    )
    mine = run_of(collector, own.hex())
    assert (mine["status"], mine["success_source"]) == ("completed", "reported")


def test_spans_sent_with_a_grader_key_grade_their_run(collector: Collector) -> None:
    key = grader_key(collector)
    trace_id, root = new_trace_id(), new_span_id()
    events = [
        (
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.score.label": "Failed",
                "gen_ai.evaluation.score.value": 0.1,
                "gen_ai.evaluation.explanation": "off by one",
            },
        )
    ]
    root_span = span(trace_id, root, "run", events=events)
    assert (
        collector.post(request([root_span], AGENT).SerializeToString(), key=key).status_code == 200
    )
    run = run_of(collector, trace_id.hex())
    assert (run["success"], run["success_source"]) == (False, "graded")
    assert (run["grade"]["score"], run["grade"]["output"]) == (0.1, "off by one")
    assert run["grade"]["graded_at"] == "2026-09-21T14:13:21Z"  # the event's (EPOCH_NS + 1 s)
    # the same event from the agent's own key: the outcome counts, as reported
    own = new_trace_id()
    assert (
        collector.post(
            request([span(own, new_span_id(), "run", events=events)], AGENT).SerializeToString()
        ).status_code
        == 200
    )
    mine = run_of(collector, own.hex())
    assert (mine["success"], mine["success_source"], mine["grade"]["score"]) == (
        False,
        "reported",
        0.1,
    )


def test_a_grade_for_another_owners_agent_waits_under_its_own_owner(collector: Collector) -> None:
    trace_id = send_run(collector, success=True)  # owner-a's agent
    other = grader_key(collector, "owner-b")
    reply = post_grade(collector, other, {"agent": AGENT, "run_key": trace_id, "success": False})
    assert reply.status_code == 202 and reply.json()["run_ids"] == []
    run = run_of(collector, trace_id)
    assert (run["success"], run["success_source"], run["grade"]) == (True, "reported", None)
    assert collector.query("SELECT DISTINCT owner FROM grades") == [("owner-b",)]
    # owner-b's own agent of that name, when its spans come, takes the grade
    message = agent_run("t1", service=AGENT, success=True)
    for s in message.resource_spans[0].scope_spans[0].spans:
        s.trace_id = bytes.fromhex(trace_id)
    b_ingest = collector.service.keys.create("owner-b")
    assert collector.post(message.SerializeToString(), key=b_ingest).status_code == 200
    collector.settle()
    outcomes = dict(
        collector.query("SELECT owner, success_source FROM runs WHERE trace_id = ?", trace_id)
    )
    assert outcomes == {"owner-a": "reported", "owner-b": "graded"}


def test_verified_state_walks_from_none_to_partial_to_verified(collector: Collector) -> None:
    key = grader_key(collector)
    first = new_trace_id()
    running = span(first, new_span_id(), "tool", parent=new_span_id(), flags=LOCAL)
    assert collector.post(request([running], AGENT).SerializeToString()).status_code == 200
    collector.settle()
    assert (stats(collector)["verified_state"], stats(collector)["graded_runs"]) == (None, 0)
    runs = [send_run(collector) for _ in range(2)]
    completed_runs(collector, 2)
    assert (stats(collector)["verified_state"], stats(collector)["graded_runs"]) == (
        "self_reported",
        0,
    )
    post_grade(collector, key, {"agent": AGENT, "run_key": runs[0], "success": True})
    assert (stats(collector)["verified_state"], stats(collector)["graded_runs"]) == ("partial", 1)
    post_grade(collector, key, {"agent": AGENT, "run_key": runs[1], "success": False})
    final = stats(collector)
    assert (final["verified_state"], final["graded_runs"]) == ("verified", 2)
    assert final["successful_runs"] == 1  # the grades decide the composite's outcomes
    filtered = collector.http.get(
        f"{collector.http_url}/api/v1/agents/{agent_id(collector, AGENT)}/stats",
        params={"version": "none-such"},
    ).json()
    assert (filtered["graded_runs"], filtered["verified_state"]) == (0, None)


@pytest.mark.parametrize(
    "body",
    [
        {"agent": AGENT, "run_key": "", "success": True},
        {"agent": "", "run_key": "k", "success": True},
        {"agent": AGENT, "success": True},
        {"agent": AGENT, "run_key": "k"},
        {"agent": AGENT, "run_key": "k", "success": "yes"},
        {"agent": AGENT, "run_key": "k", "success": 1},
        {"agent": AGENT, "run_key": 7, "success": True},
        {"agent": AGENT, "run_key": "k", "success": True, "score": "0.5"},
        {"agent": AGENT, "run_key": "k", "success": True, "score": True},
        {"agent": AGENT, "run_key": "k", "success": True, "output": ["a"]},
        {"agent": AGENT, "run_key": "k", "success": True, "output": "x" * (64 * 1024 + 1)},
        {"agent": AGENT, "run_key": "k", "success": True, "expected_output": "é" * 32769},
        {"agent": AGENT, "run_key": "k\x00", "success": True},
        [1, 2],
        "not json",
    ],
)
def test_bad_grades_are_422_and_store_nothing(collector: Collector, body: Any) -> None:
    raw = body.encode() if isinstance(body, str) else body
    reply = post_grade(collector, grader_key(collector), raw)
    assert reply.status_code == 422, reply.text
    assert isinstance(reply.json()["detail"], str)
    assert collector.query("SELECT count(*) FROM grades") == [(0,)]


def test_a_non_finite_score_is_422(collector: Collector) -> None:
    body = b'{"agent": "a", "run_key": "k", "success": true, "score": NaN}'
    assert post_grade(collector, grader_key(collector), body).status_code == 422


def test_unknown_fields_are_ignored_and_64_kib_strings_are_taken(collector: Collector) -> None:
    body = {
        "agent": AGENT,
        "run_key": "k",
        "success": True,
        "score": 3,
        "output": "x" * (64 * 1024),
        "verdict": "extra",
    }
    reply = post_grade(collector, grader_key(collector), body)
    assert reply.status_code == 202, reply.text
    [(output, score)] = collector.query("SELECT output, score FROM grades")
    assert len(output) == 64 * 1024 and score == 3.0
