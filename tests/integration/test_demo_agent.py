"""The demo agent screened by the real `screen` command against a real collector.

The agent is the shipped command, `badge-collector demo-agent`, in a child
process (its ASGI middleware, its SDK exporter with an agent key of the
grader's owner); the suite is the example `make demo` screens. What the
collector makes of the screenings must be what the agent did (its tool
calls as steps, its model calls, its tokens), and compare of a variant's
screening with the baseline's must find the regression the variant was
built to cause, and nothing else. One baseline screening serves both
variants.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from collector.cli import main
from tests.integration.harness import Collector, running_collector
from tests.integration.screening import API, Screened, event, root_of, runs_of

SUITE = str(Path(__file__).resolve().parents[2] / "examples" / "concierge.yaml")
AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")


@dataclass
class Screenings:
    collector: Collector
    done: dict[str, Screened]  # by screening id: base, broken, slower


@contextmanager
def demo_agent(c: Collector, variant: str) -> Iterator[str]:
    """`badge-collector demo-agent` in a child process, as `make demo` runs it: its sleeps are
    its own, not this process's, which also runs the collector and the screener. Stopping it
    flushes its spans, and the collector acknowledges an export only once it is stored."""
    command = [sys.executable, "-m", "collector", "demo-agent", "--port", "0"]
    command += ["--variant", variant, "--url", c.http_url, "--key", c.key]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as agent:
        try:
            assert agent.stdout is not None
            banner = agent.stdout.readline()
            found = re.search(r"answering POST (\S+/run)", banner)
            assert found is not None, banner
            yield found.group(1)
        finally:
            agent.terminate()
            agent.wait(10)


def screen(c: Collector, grader: str, variant: str, screening_id: str, *flags: str) -> Screened:
    out, err = StringIO(), StringIO()
    with demo_agent(c, variant) as endpoint, redirect_stdout(out), redirect_stderr(err):
        code = main(
            ["screen", "concierge", "--suite", SUITE, "--endpoint", endpoint, "--url", c.http_url]
            + ["--key", grader, "--settle", "0.2", "--screening-id", screening_id]
            + ["--concurrency", "5", *flags]
        )
    c.settle()  # the agent has stopped: its spans are stored; recompute their runs now
    return Screened(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def screenings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Screenings]:
    with running_collector(tmp_path_factory.mktemp("demo")) as c:  # SQLite: this is the agent
        grader = c.service.keys.create("owner-a", "grader")
        done = {"base": screen(c, grader, "baseline", "base", "--version", "1.0.0")}
        gate = ("--baseline", "1.0.0", "--fail-on-regression")
        done["broken"] = screen(c, grader, "broken", "broken", "--version", "1.1.0", *gate)
        done["slower"] = screen(c, grader, "slower", "slower", "--version", "1.2.0")
        yield Screenings(c, done)


def compare(c: Collector, base: str, head: str) -> dict[str, Any]:
    agent = runs_of(c, "concierge")[0]["agent_id"]
    reply = c.http.get(
        f"{c.http_url}{API}/agents/{agent}/compare",
        params={"base_screening": base, "head_screening": head},
    )
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def verdicts(compared: dict[str, Any]) -> dict[str, str]:
    return {axis: compared["axes"][axis]["verdict"] for axis in AXES}


def test_the_baseline_passes_and_each_run_counts_what_the_agent_did(
    screenings: Screenings,
) -> None:
    c, good = screenings.collector, screenings.done["base"]
    assert good.code == 0, good.err
    assert "round 3/3: 10 dispatched, 10 passed, 0 errors" in good.err
    runs = [r for r in runs_of(c, "concierge") if r["screening_id"] == "base"]
    assert len(runs) == 30 and all(r["success"] is True for r in runs)
    assert {r["success_source"] for r in runs} == {"graded"}
    for run in runs:
        root = root_of(c, run["id"])
        did = json.loads(event(root, "badge.response")["body"])  # the agent's own account
        assert run["steps"] == len(did["tool_calls"]), run["task_id"]
        assert run["llm_calls"] == did["model_calls"]
        detail = c.http.get(f"{c.http_url}{API}/runs/{run['id']}").json()
        assert [t["name"] for t in detail["tool_calls"]] == did["tool_calls"]  # in call order
        assert run["input_tokens"] == did["input_tokens"]
        assert run["output_tokens"] == did["output_tokens"]
        [server] = root["children"]  # the ASGI middleware continued the screener's trace
        assert [s["name"] for s in server["children"]] == ["invoke_agent concierge"]
    assert {r["steps"] for r in runs} == {0, 1, 2}  # the greeting uses no tool, the VAT two


def test_broken_fails_the_gate_on_correctness_with_the_two_refund_tasks(
    screenings: Screenings,
) -> None:
    worse = screenings.done["broken"]
    assert worse.code == 1 and "REGRESSED" in worse.out, worse.out + worse.err
    assert "round 3/3: 10 dispatched, 8 passed, 0 errors" in worse.err
    compared = compare(screenings.collector, "base", "broken")
    assert compared["regressed"] is True
    found = verdicts(compared)
    assert found.pop("correctness") == "regressed", compared["axes"]["correctness"]
    # The same tool calls and tokens as the baseline: nothing else moved. Latency is left
    # out: it is wall time, here shared with the collector and the screener in one process.
    assert found["cost"] == found["tool_efficiency"] == found["robustness"] == "unchanged"
    changes = {t["task_id"]: t["change"] for t in compared["tasks"] if t["change"] != "same"}
    assert changes == {"refund-window": "broken", "refund-eligible": "broken"}


def test_slower_regresses_latency_and_nothing_else(screenings: Screenings) -> None:
    slow = screenings.done["slower"]
    assert slow.code == 0 and "10 passed" in slow.err, slow.err
    compared = compare(screenings.collector, "base", "slower")
    found = verdicts(compared)
    assert found.pop("latency") == "regressed", compared["axes"]["latency"]
    assert "regressed" not in found.values() and compared["regressed"] is True
    assert all(t["change"] == "same" for t in compared["tasks"])
    base, head = compared["base"]["latency_p50_ms"], compared["head"]["latency_p50_ms"]
    assert head - base >= 150  # a model call or more per task, each 150 ms slower
