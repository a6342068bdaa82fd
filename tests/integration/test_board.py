"""The board the collector keeps per agent (collector/storage/board.py): the
leaderboard and its re-ranking by viewer weights in one query, with the same
numbers as the per-agent views (issue 29: a re-ranked board ran one query
per agent)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.support.otlp import agent_run
from tests.integration.harness import Collector, running_collector

# name -> (runs, latency ms, passes): fast but failing, slow but right, in between
AGENTS = {"fast-wrong": (6, 300, 2), "slow-right": (6, 7_000, 6), "middle": (6, 2_000, 4)}


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}/api/v1{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def board_names(c: Collector, **weights: float) -> list[str]:
    page = c.http.get(f"{c.http_url}/", params={k: str(v) for k, v in weights.items()})
    assert page.status_code == 200, page.text
    ids = re.findall(r'<tr data-agent-id="([^"]+)"', page.text)
    names = {a["id"]: a["name"] for a in get(c, "/agents")["items"]}
    return [names[i] for i in ids]


def test_the_board_ranks_as_the_views_score_and_reranks_by_weights(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        for name, (runs, latency, passes) in AGENTS.items():
            for i in range(runs):
                run = agent_run(
                    f"t{i % 3}", service=name, latency_ns=latency * 10**6, success=i < passes
                )
                assert c.post(run.SerializeToString()).status_code == 200
        c.settle()
        listed = get(c, "/agents")["items"]
        for agent in listed:
            assert (
                agent["composite_score"]
                == get(c, f"/agents/{agent['id']}/stats")["composite_score"]
            )
        canonical = [a["name"] for a in listed]
        assert board_names(c) == canonical
        weights = {"correctness": 5.0, "latency": 0.0, "cost": 0.0, "tool_efficiency": 0.0}
        by_correctness = board_names(c, **weights, robustness=0.0)
        assert by_correctness == ["slow-right", "middle", "fast-wrong"]
        expected = sorted(
            listed,
            key=lambda a: (
                -get(c, f"/agents/{a['id']}/fitness", weights="latency:1")["composite_score"]
            ),
        )
        latency_only = {"correctness": 0.0, "latency": 5.0, "cost": 0.0}
        assert board_names(c, **latency_only, tool_efficiency=0.0, robustness=0.0) == [
            a["name"] for a in expected
        ]
        # a new run moves its agent's board row within a sweep
        more = agent_run("t9", service="fast-wrong", latency_ns=300 * 10**6, success=True)
        assert c.post(more.SerializeToString()).status_code == 200
        c.settle()
        fast = next(a for a in get(c, "/agents")["items"] if a["name"] == "fast-wrong")
        assert fast["total_runs"] == 7
