"""The screening's document, `GET /agents/{id}/screenings/{screening_id}` (SCREEN.md section 5).

The collector is the authority on a screening's runs: it holds the agent's
own spans, so only it knows a run's steps, and it alone computes the
composite, radar and pass^k, and whether every planned dispatch has its
run. This module finds the screened runs (by the trace ids the screener
created), waits for them to be assembled, and asks the collector for the
document. (It used to build the document itself for collectors without the
endpoint; every collector has it now, issue 42 item 15.)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from collector.api_client import ApiClient, Reply, segment
from collector.screening.screener import Outcome

RADAR_AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
POLL_S = 0.25


def screened_runs(
    client: ApiClient, agent_ids: Sequence[str], screening_id: str, outcomes: list[Outcome]
) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The agent (among these) that holds our traces, and its runs by trace id; with a
    single candidate, that one even before any run arrived."""
    wanted = {o.trace_id for o in outcomes}
    best: tuple[str | None, dict[str, dict[str, Any]]] = (
        agent_ids[0] if len(agent_ids) == 1 else None,
        {},
    )
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
    client: ApiClient,
    agent: str,
    agent_id: str | None,
    screening_id: str,
    outcomes: list[Outcome],
    timeout_s: float,
) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """Poll until every dispatch's run is in and terminal, or `timeout_s` passed. The
    agent's id is known when the plan was recorded; else it is the named agent that
    holds the screening's traces."""
    deadline = time.monotonic() + timeout_s
    while True:
        candidates = [agent_id] if agent_id is not None else client.agents_named(agent)
        found_id, runs = screened_runs(client, candidates, screening_id, outcomes)
        done = len(runs) == len(outcomes) and all(r["status"] != "running" for r in runs.values())
        if done or time.monotonic() >= deadline:
            return found_id, runs
        time.sleep(POLL_S)


def fetch_document(client: ApiClient, agent_id: str, screening_id: str) -> Reply:
    """The collector's screening document (the id percent-encoded: any id opens)."""
    return client.get(f"/agents/{segment(agent_id)}/screenings/{segment(screening_id)}")
