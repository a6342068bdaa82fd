"""The screening's document, `GET /agents/{id}/screenings/{screening_id}` (SCREEN.md section 5).

The collector is the authority on a screening's runs: it holds the agent's
own spans, so only it knows a run's steps, and it alone computes the
composite, radar and pass^k. This module finds the screened runs (by the
trace ids the screener created), waits for them to be assembled, and
asks the collector for the document. Until that endpoint exists on the
collector it is talking to, it builds the same shape from the runs list
and the `screening=` views (`build_document`): the TODO hook below.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from collector.screening.client import CollectorClient
from collector.screening.plan import Screening
from collector.screening.screener import Outcome

RADAR_AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
POLL_S = 0.25


def screened_runs(
    client: CollectorClient, agent_ids: Sequence[str], screening_id: str, outcomes: list[Outcome]
) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The agent (among those with the name) that holds our traces, and its runs by trace id."""
    wanted = {o.trace_id for o in outcomes}
    best: tuple[str | None, dict[str, dict[str, Any]]] = (None, {})
    for agent_id in agent_ids:
        found = {
            run["trace_id"]: run
            for run in client.pages("/runs", agent_id=agent_id, screening=screening_id)
            if run["trace_id"] in wanted
        }
        if len(found) > len(best[1]):
            best = (agent_id, found)
    return best


def wait_for_runs(
    client: CollectorClient,
    agent: str,
    screening_id: str,
    outcomes: list[Outcome],
    timeout_s: float,
) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """Poll until every dispatch's run is in and terminal, or `timeout_s` passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        agent_id, runs = screened_runs(client, client.agents_named(agent), screening_id, outcomes)
        done = len(runs) == len(outcomes) and all(r["status"] != "running" for r in runs.values())
        if done or time.monotonic() >= deadline:
            return agent_id, runs
        time.sleep(POLL_S)


def fetch_document(
    client: CollectorClient,
    agent_id: str,
    screening: Screening,
    outcomes: list[Outcome],
    runs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The collector's screening document, else the same shape built from its runs."""
    reply = client.get(f"/agents/{agent_id}/screenings/{screening.screening_id}")
    if reply.ok and isinstance(reply.body, dict) and "tasks" in reply.body:
        return dict(reply.body)
    # TODO(screenings endpoint): for collectors without GET /agents/{id}/screenings/{sid}
    # (SCREEN.md section 5). Its radar here is /fitness?screening= (the latest 100 runs),
    # the endpoint's is over every run of the screening. Drop once no such collector is left.
    return build_document(client, agent_id, screening, outcomes, runs)


def build_document(
    client: CollectorClient,
    agent_id: str,
    screening: Screening,
    outcomes: list[Outcome],
    runs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """SCREEN.md section 5's document from the runs the screener dispatched and found."""
    sid = screening.screening_id
    by_task: dict[str, list[tuple[Outcome, dict[str, Any] | None]]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.round):
        by_task.setdefault(outcome.task_id, []).append((outcome, runs.get(outcome.trace_id)))
    tasks = [_task_row(task_id, by_task[task_id], screening.rounds) for task_id in sorted(by_task)]
    filtered = client.accepts("/agents/{agent_id}/stats", "screening")
    stats = _view(client, f"/agents/{agent_id}/stats", sid, filtered)
    fitness = _view(client, f"/agents/{agent_id}/fitness", sid, filtered)
    repeat = _view(client, f"/agents/{agent_id}/reliability", sid, filtered)
    found = list(runs.values())
    return {
        "screening_id": sid,
        "suite_name": screening.suite.name,
        "suite_digest": screening.suite.digest,
        "version": screening.version,
        "rounds": screening.rounds,
        "total_runs": len(found),
        "completed_runs": sum(r["status"] == "completed" for r in found),
        "successful_runs": sum(r["status"] == "completed" and r["success"] is True for r in found),
        "first_run_at": min((r["started_at"] for r in found), default=None),
        "last_run_at": max((r["started_at"] for r in found), default=None),  # as the API
        "composite_score": stats.get("composite_score"),
        "tasks": tasks,
        "pass_1": repeat.get("pass_1"),
        "pass_3": repeat.get("pass_3"),
        "pass_5": repeat.get("pass_5"),
        "radar": {
            **{axis: fitness.get(axis) for axis in RADAR_AXES},
            "composite_score": fitness.get("composite_score"),
            "runs_counted": fitness.get("runs_counted"),
        },
    }


def _view(client: CollectorClient, path: str, screening_id: str, filtered: bool) -> dict[str, Any]:
    """A `screening=` view; empty (figures null) when the collector cannot filter by it,
    rather than the agent's figures over every run passed off as the screening's."""
    if not filtered:
        return {}
    reply = client.get(path, screening=screening_id)
    return dict(reply.body) if reply.ok and isinstance(reply.body, dict) else {}


def _task_row(
    task_id: str, pairs: list[tuple[Outcome, dict[str, Any] | None]], rounds: int
) -> dict[str, Any]:
    known = [run for _, run in pairs if run is not None]
    cells: list[bool | None] = [None] * rounds
    for outcome, run in pairs:
        if run is not None and 1 <= outcome.round <= rounds:
            cells[outcome.round - 1] = run["success"]
    successes = sum(run["success"] is True for run in known)
    graded = sum(run["success"] is not None for run in known)
    latencies = [run["latency_ms"] for run in known if run["latency_ms"] is not None]
    steps = [run["steps"] for run in known if run["steps"] is not None]
    return {
        "task_id": task_id,
        "runs": len(known),
        "successes": successes,
        "pass_rate": successes / graded if graded else None,
        "outcomes": cells,
        "error_classes": dict(sorted(Counter(run["error_class"] for run in known).items())),
        "latency_p50_ms": statistics.median(latencies) if latencies else None,
        "steps_p50": statistics.median(steps) if steps else None,
    }
