"""`screen` records its plan, refuses a used screening id, and `--resume` dispatches only
what has no run (docs/screening.md "Incomplete screenings"), against a real instrumented
agent over HTTP and a real collector."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector
from tests.integration.screening import run_screen, runs_of, write_suite
from tests.screening_agent import agent_app, serving

TASKS = [
    {"id": f"t{i}", "prompt": f"task {i}", "expected_output": "ok", "metadata": {"answer": "ok"}}
    for i in range(3)
]


def test_a_used_screening_id_is_refused_and_resume_sends_only_what_is_missing(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    suite = write_suite(tmp_path, TASKS, rounds=2)
    app, calls = agent_app(c.http_url, c.key, service="resume-bot")
    args = ("resume-bot", "--suite", str(suite), "--version", "1.0")
    with serving(app) as url:
        first = run_screen(
            capsys, c, *args, "--endpoint", f"{url}/run", "--screening-id", "r-1", key=grader
        )
        assert first.code == 0, first.err
        assert "INCOMPLETE" not in first.out and len(calls.chats) == 6
        again = run_screen(
            capsys, c, *args, "--endpoint", f"{url}/run", "--screening-id", "r-1", key=grader
        )
        assert again.code == 2 and "exists (6 of 6 planned runs stored)" in again.err
        assert "--resume" in again.err and len(calls.chats) == 6  # nothing was sent
        nothing = run_screen(
            capsys,
            c,
            *args,
            "--endpoint",
            f"{url}/run",
            "--screening-id",
            "r-1",
            "--resume",
            "--json",
            key=grader,
        )
        assert nothing.code == 0, nothing.err
        assert json.loads(nothing.out)["complete"] is True and len(calls.chats) == 6
        # A screening whose screener died after two dispatches: its plan and two runs.
        half = plan_and_two_runs(c, grader, suite)
        resumed = run_screen(
            capsys,
            c,
            *args,
            "--endpoint",
            f"{url}/run",
            "--screening-id",
            half,
            "--resume",
            "--json",
            key=grader,
        )
    assert resumed.code == 0, resumed.err
    assert "resumed: 4 of 6 to dispatch" in resumed.err
    sent = sorted(key for key in calls.chats if key.startswith(half))
    assert sent == [f"{half}/t0/2", f"{half}/t1/2", f"{half}/t2/1", f"{half}/t2/2"]
    document = json.loads(resumed.out)
    assert (document["complete"], document["stored_runs"], document["total_runs"]) == (True, 6, 6)
    assert len([r for r in runs_of(c, "resume-bot") if r["task_id"]]) == 12


def plan_and_two_runs(c: Collector, grader: str, suite: Path) -> str:
    """What a screener killed after round 1's first two dispatches leaves behind."""
    from collector.screening.suite import load_suite

    loaded = load_suite(suite)
    body = {
        "agent": "resume-bot",
        "screening_id": "r-2",
        "suite_name": loaded.name,
        "suite_digest": loaded.digest,
        "version": "1.0",
        "rounds": 2,
        "tasks": [t["id"] for t in TASKS],
    }
    headers = {"authorization": f"Bearer {grader}"}
    assert (
        c.http.post(f"{c.http_url}/api/v1/screenings", json=body, headers=headers).status_code
        == 201
    )
    for task in ("t0", "t1"):
        trace_id, root = new_trace_id(), new_span_id()
        attributes = {
            "badge.task.id": task,
            "badge.run.id": f"r-2/{task}/1",
            "badge.run.success": True,
            "badge.screening.id": "r-2",
            "badge.screening.round": 1,
            "badge.agent.version": "1.0",
        }
        spans = [
            span(
                trace_id,
                root,
                "badge.run",
                start=EPOCH_NS,
                end=EPOCH_NS + 10**8,
                attributes=attributes,
            )
        ]
        assert (
            c.post(request(spans, "resume-bot").SerializeToString(), key=grader).status_code == 200
        )
    c.settle()
    return "r-2"


def test_an_agent_key_cannot_reuse_an_id_nor_resume(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    suite = write_suite(tmp_path, TASKS[:1], rounds=1)
    app, calls = agent_app(c.http_url, c.key, service="agent-keyed")
    args = ("agent-keyed", "--suite", str(suite), "--screening-id", "k-1")
    with serving(app) as url:
        first = run_screen(capsys, c, *args, "--endpoint", f"{url}/run", key=c.key)
        assert first.code == 0, first.err
        assert "plan is not recorded" in first.err
        again = run_screen(capsys, c, *args, "--endpoint", f"{url}/run", key=c.key)
        assert again.code == 2 and "exists" in again.err
        resume = run_screen(capsys, c, *args, "--endpoint", f"{url}/run", "--resume", key=c.key)
        assert resume.code == 2 and "--resume needs a grader key" in resume.err
    assert len(calls.chats) == 1
