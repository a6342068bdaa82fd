"""Who may read and write what (docs/api.md "Who may read what"), against a
real collector: keyless reads show what ranks an agent and no text a span or
a grader wrote; the owner's key shows the rest; --insecure opens reads only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.support.otlp import new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, running_collector
from tests.integration.test_api import agent_id, completed_runs, run_trace
from tests.integration.test_grades import grader_key, post_grade

AGENT = "private-agent"
API = "/api/v1"
# What the probe of issue 29 read without a key: a customer's e-mail address in
# an evaluation's explanation and in error.type, and the grader's answer key.
FREE_TEXT_CLASS = "LookupError: no account for jane@example.com"
EXPLANATION = "sent the refund to jane@example.com"
EXPECTED = "the answer key: 42"


def private_run(c: Collector, error_type: str = FREE_TEXT_CLASS) -> str:
    """A failed run whose root carries free text: error.type and an evaluation's
    explanation; returns its run id."""
    trace_id, root = new_trace_id(), new_span_id()
    evaluation = {
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.score.value": 0.1,
        "gen_ai.evaluation.explanation": EXPLANATION,
    }
    root_span = span(
        trace_id,
        root,
        "run",
        attributes={"error.type": error_type, "badge.task.id": "t1"},
        status=2,
        events=[("gen_ai.evaluation.result", evaluation)],
    )
    assert c.post(request([root_span], AGENT).SerializeToString()).status_code == 200
    c.settle()
    [(run_id,)] = c.query("SELECT id FROM runs WHERE trace_id = ?", trace_id.hex())
    return str(run_id)


def read(c: Collector, path: str, key: str | None = None, **params: Any) -> Any:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    reply = c.http.get(f"{c.http_url}{API}{path}", params=params, headers=headers)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_keyless_reads_show_no_text_a_span_or_a_grader_wrote(collector: Collector) -> None:
    run_id = private_run(collector)
    trace_id = collector.query("SELECT trace_id FROM runs WHERE id = ?", run_id)[0][0]
    grade = {
        "agent": AGENT,
        "run_key": trace_id,
        "success": False,
        "expected_output": EXPECTED,
        "error_class": "wrong_answer",
    }
    assert post_grade(collector, grader_key(collector), grade).status_code == 202
    public = read(collector, f"/runs/{run_id}")
    # what ranks the agent stays public
    assert (public["status"], public["success"], public["success_source"]) == (
        "completed",
        False,
        "graded",
    )
    assert public["latency_ms"] == 1000.0 and public["task_id"] == "t1"
    assert public["grade"]["score"] == 0.1 and public["grade"]["success"] is False
    # what a span or a grader wrote does not
    assert public["owner_view"] is False
    assert public["error_class"] == "other"
    assert public["grade"]["expected_output"] is None and public["grade"]["output"] is None
    assert public["grade"]["error_class"] == "other"
    listed = read(collector, "/runs", agent_id=agent_id(collector, AGENT))["items"]
    assert [(r["error_class"], r["owner_view"]) for r in listed] == [("other", False)]
    for body in (public, listed):
        assert "jane@example.com" not in str(body) and EXPECTED not in str(body)
    # another owner's key is no better than none
    stranger = collector.service.keys.create("someone-else")
    assert read(collector, f"/runs/{run_id}", stranger) == public
    # the owner's key (any of the owner's keys) shows the rest
    for key in (collector.key, grader_key(collector)):
        mine = read(collector, f"/runs/{run_id}", key)
        assert mine["owner_view"] is True and mine["error_class"] == FREE_TEXT_CLASS
        assert (mine["grade"]["expected_output"], mine["grade"]["error_class"]) == (
            EXPECTED,
            "wrong_answer",
        )
        owned = read(collector, "/runs", key, agent_id=agent_id(collector, AGENT))["items"]
        assert owned[0]["error_class"] == FREE_TEXT_CLASS


def test_an_evaluations_explanation_is_the_owners(collector: Collector) -> None:
    run_id = private_run(collector)
    public = read(collector, f"/runs/{run_id}")
    assert public["grade"]["output"] is None and public["grade"]["score"] == 0.1
    assert read(collector, f"/runs/{run_id}", collector.key)["grade"]["output"] == EXPLANATION


def test_the_fixed_error_classes_stay_public(collector: Collector) -> None:
    fixed = ("timeout", "http_error", "bad_response_shape", "connection_error", "exception")
    for error_class in fixed:
        private_run(collector, error_class)
    collector.post(run_trace("t", service=AGENT))
    completed_runs(collector, len(fixed) + 1)
    listed = read(collector, "/runs", agent_id=agent_id(collector, AGENT))["items"]
    assert sorted(r["error_class"] for r in listed) == sorted([*fixed, "none"])


def test_insecure_opens_reads_only(tmp_path: Path) -> None:
    with running_collector(tmp_path, insecure=True) as c:
        run_id = private_run(c)
        # every read is open, traces and the owner's text included
        public = read(c, f"/runs/{run_id}")
        assert public["owner_view"] is True and public["error_class"] == FREE_TEXT_CLASS
        assert public["grade"]["output"] == EXPLANATION
        assert c.http.get(f"{c.http_url}{API}/runs/{run_id}/trace").status_code == 200
        # no write is: deleting an agent, grading, saving weights
        ident = agent_id(c, AGENT)
        agent_url = f"{c.http_url}{API}/agents/{ident}"
        assert c.http.delete(agent_url).status_code == 401
        assert c.http.get(agent_url).status_code == 200  # still there
        intruder = c.service.keys.create("intruder")
        refused = c.http.delete(agent_url, headers={"authorization": f"Bearer {intruder}"})
        assert refused.status_code == 403
        grade = {"agent": AGENT, "run_key": "k", "success": True}
        assert post_grade(c, None, grade).status_code == 401
        assert c.query("SELECT count(*) FROM grades") == [(0,)]
        weights = f"{c.http_url}{API}/me/radar-weights"
        assert c.http.put(weights, json={"weights": {"latency": 2}}).status_code == 401
        assert c.http.delete(weights).status_code == 401
        assert c.http.get(weights).json()["saved"] is False
        # the owner's key still writes
        owner = {"authorization": f"Bearer {c.key}"}
        assert c.http.delete(agent_url, headers=owner).status_code == 204
