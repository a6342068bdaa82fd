"""`screen` end to end: a real instrumented HTTP agent, a real collector, both databases.

The agent is a Starlette app behind OpenTelemetry's ASGI middleware: the
screener's `traceparent` is extracted by the real propagator and the agent's
own chat and execute_tool spans leave through the real SDK exporter. What
the collector makes of the screened runs must equal what the agent did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.harness import Collector
from tests.integration.screening import event, root_of, run_screen, runs_of, write_suite
from tests.screening_agent import INPUT_TOKENS, OUTPUT_TOKENS, agent_app, serving

TASKS: list[dict[str, Any]] = [
    {
        "id": "refund",
        "prompt": "Refund order 17",
        "expected_output": "refund issued",
        "metadata": {"answer": "Your refund issued today", "tools": ["lookup", "refund"]},
    },
    {
        "id": "greet",
        "prompt": "Say hello",
        "expected_output": "hello",
        "metadata": {"answer": "hello there", "tools": [], "wrong_in_rounds": [2]},
    },
    {
        "id": "track parcel",
        "prompt": "Where is my parcel?",
        "metadata": {"answer": "on its way", "tools": ["track", "eta", "notify"]},
    },
]


def test_three_rounds_record_the_agents_own_tool_steps_llm_calls_and_tokens(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    suite = write_suite(tmp_path, TASKS, rounds=3)
    app, calls = agent_app(c.http_url, c.key, service="support-bot")
    with serving(app) as url:
        done = run_screen(
            capsys,
            c,
            "support-bot",
            "--suite",
            str(suite),
            "--endpoint",
            f"{url}/run?token=secret",
            "--version",
            "1.0",
            "--screening-id",
            "scr-1",
            "--header",
            "X-Agent-Token: t0ken",
            key=grader,
        )
    assert done.code == 0, done.err
    assert "round 1/3: 3 dispatched, 3 passed, 0 errors" in done.err
    assert "round 2/3: 3 dispatched, 2 passed, 0 errors" in done.err
    assert "not count as verified" not in done.err
    assert "greet" in done.out and " 2/3 " in done.out and "pass  fail  pass" in done.out
    runs = [r for r in runs_of(c, "support-bot") if r["task_id"] is not None]
    assert len(runs) == 9
    by_key = {f"scr-1/{r['task_id']}/{round_of(c, r)}": r for r in runs}
    assert set(by_key) == set(calls.tools) and len(calls.tools) == 9
    for run_key, run in by_key.items():
        assert run["status"] == "completed" and run["success_source"] == "graded"
        assert run["steps"] == calls.tools[run_key], run_key  # the agent's own tool spans
        assert run["llm_calls"] == calls.chats[run_key] == 2
        assert run["input_tokens"] == 2 * INPUT_TOKENS
        assert run["output_tokens"] == 2 * OUTPUT_TOKENS
        assert run["version"] == "1.0" and run["error_class"] == "none"
        assert run["success"] is (run_key != "scr-1/greet/2")
    root = root_of(c, by_key["scr-1/refund/1"]["id"])
    attributes = root["attributes"]
    assert root["kind"] in ("client", "CLIENT", 3)
    assert attributes["url.full"] == f"{url}/run" and attributes["http.request.method"] == "POST"
    assert attributes["http.response.status_code"] == 200
    assert attributes["badge.run.id"] == "scr-1/refund/1"
    assert attributes["badge.screening.round"] == 1 and attributes["badge.grader"] == "fuzzy"
    assert attributes["badge.grade.score"] == 1.0 and attributes["badge.run.status"] == "completed"
    assert attributes["badge.output"] == "Your refund issued today"
    assert attributes["badge.expected_output"] == "refund issued"
    assert json.loads(event(root, "badge.request")["body"])["task_id"] == "refund"
    response = event(root, "badge.response")
    assert response["status"] == 200 and "kept as evidence" in response["body"]
    server_spans = [s for s in root["children"] if s["parent_span_id"] == root["span_id"]]
    assert server_spans, "the agent's ASGI server span continues the screener's trace"


def round_of(c: Collector, run: dict[str, Any]) -> int:
    return int(root_of(c, run["id"])["attributes"]["badge.screening.round"])


def test_an_agent_whose_spans_name_another_service_still_joins_the_run(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    suite = write_suite(tmp_path, TASKS[:1], rounds=1)
    app, calls = agent_app(c.http_url, c.key, service="support-backend")
    with serving(app) as url:
        done = run_screen(
            capsys, c, "support-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key=grader
        )
    assert done.code == 0, done.err
    [run] = [r for r in runs_of(c, "support-bot") if r["task_id"] == "refund"]
    assert run["steps"] == 2 and run["llm_calls"] == 2


def test_an_agent_key_screens_but_warns_and_json_is_the_only_stdout(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    suite = write_suite(tmp_path, TASKS, rounds=2)
    app, _ = agent_app(c.http_url, c.key, service="json-bot")
    with serving(app) as url:
        done = run_screen(
            capsys,
            c,
            "json-bot",
            "--suite",
            str(suite),
            "--endpoint",
            f"{url}/run",
            "--json",
            "--screening-id",
            "scr-json",
            key=c.key,
        )
    assert done.code == 0, done.err
    assert "will not count as verified" in done.err
    document = json.loads(done.out)  # stdout is the document and nothing else
    assert document["screening_id"] == "scr-json" and document["rounds"] == 2
    assert document["suite_name"] == "support" and len(document["suite_digest"]) == 64
    assert document["total_runs"] == 6
    greet = next(t for t in document["tasks"] if t["task_id"] == "greet")
    assert greet["outcomes"] == [True, False] and greet["runs"] == 2
    assert greet["successes"] == 1 and greet["error_classes"] == {"none": 2}
    assert [t["task_id"] for t in document["tasks"]] == sorted(t["id"] for t in TASKS)
    axes = {"correctness", "latency", "cost", "tool_efficiency", "robustness"}
    assert axes <= set(document["radar"])
    runs = [r for r in runs_of(c, "json-bot") if r["task_id"] is not None]
    assert {r["success_source"] for r in runs} == {"reported"}


def gate_tasks(broken: bool) -> list[dict[str, Any]]:
    """Six tasks (a paired test needs five); `broken`: every answer wrong."""
    answer = "no idea" if broken else "done"
    return [
        {
            "id": f"t{i}",
            "prompt": f"task {i}",
            "expected_output": "done",
            "metadata": {"answer": answer},
        }
        for i in range(6)
    ]


def test_the_regression_gate_fails_a_worse_version_and_passes_a_better_one(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    good = write_suite(tmp_path, gate_tasks(broken=False), name="gate", rounds=3)
    (tmp_path / "worse").mkdir()
    bad = write_suite(tmp_path / "worse", gate_tasks(broken=True), name="gate", rounds=3)
    app, _ = agent_app(c.http_url, c.key, service="gate-bot")
    with serving(app) as url:
        common = ("gate-bot", "--endpoint", f"{url}/run", "--concurrency", "6")

        def screen(suite: Path, version: str, *gate: str) -> Any:
            return run_screen(
                capsys, c, *common, "--suite", str(suite), "--version", version, *gate, key=grader
            )

        assert screen(good, "1.0").code == 0
        missing = screen(good, "1.1", "--baseline", "0.9", "--fail-on-regression")
        assert missing.code == 2 and "no runs of that version" in missing.err
        worse = screen(bad, "2.0", "--baseline", "1.0", "--fail-on-regression")
        assert worse.code == 1, worse.out + worse.err
        assert "REGRESSED" in worse.out and "correctness" in worse.out
        better = screen(good, "3.0", "--baseline", "2.0", "--fail-on-regression")
        assert better.code == 0, better.out + better.err
        assert "no regression" in better.out
