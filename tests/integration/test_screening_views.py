"""The screening views over runs a screening recorded (docs/screening.md
"Reading a screening"): the list, a screening's task-by-round table, the
`screening=` filter, and compare with screenings as sides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, running_collector, wait_for

TASKS, ROUNDS = 10, 3
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}


def screen(c: Collector, screening: str, version: str, slow: float, first: int) -> None:
    """What `badge-collector screen` records: one trace per task and round."""
    for round_ in range(1, ROUNDS + 1):
        for task in range(TASKS):
            trace_id, root = new_trace_id(), new_span_id()
            start = EPOCH_NS + first + (round_ * TASKS + task) * 10**9
            failing = task == 0 and round_ == 2
            attrs: dict[str, Any] = {
                "badge.task.id": f"t{task}",
                "badge.run.id": f"{screening}/t{task}/{round_}",
                "badge.run.success": not failing,
                "badge.agent.version": version,
                "badge.screening.id": screening,
                "badge.screening.round": round_,
                "badge.suite.name": "smoke",
                "badge.suite.digest": "d" * 64,
            }
            if failing:
                attrs["error.type"] = "http_error"
            latency = int((200 + 40 * task) * slow * 1e6)
            spans = [
                span(
                    trace_id, root, "badge.run", start=start, end=start + latency, attributes=attrs
                ),
                span(trace_id, new_span_id(), "execute_tool lookup", parent=root, attributes=TOOL),
            ]
            assert c.post(request(spans, "screened-agent").SerializeToString()).status_code == 200


@pytest.fixture(scope="module")
def screened(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> Iterator[tuple[Collector, str]]:
    path = Path(tmp_path_factory.mktemp("screening"))
    with running_collector(path, database_url=module_database_url) as c:
        screen(c, "s-1", "1.0", 1.0, 0)
        screen(c, "s-2", "1.1", 3.0, 10**12)
        c.settle()
        wait_for(lambda: c.query("SELECT count(*) FROM runs")[0][0] == 2 * TASKS * ROUNDS)
        [(ident,)] = c.query("SELECT id FROM agents")
        yield c, str(ident)


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}/api/v1{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_screenings_are_listed_newest_first_with_their_counts(
    screened: tuple[Collector, str],
) -> None:
    c, ident = screened
    items = get(c, f"/agents/{ident}/screenings")["items"]
    assert [(s["screening_id"], s["version"], s["rounds"]) for s in items] == [
        ("s-2", "1.1", 3),
        ("s-1", "1.0", 3),
    ]
    first = items[1]
    assert (first["total_runs"], first["completed_runs"], first["successful_runs"]) == (30, 30, 29)
    assert (first["suite_name"], first["suite_digest"]) == ("smoke", "d" * 64)
    stats = get(c, f"/agents/{ident}/stats", screening="s-1")
    assert first["composite_score"] == stats["composite_score"] and stats["total_runs"] == 30
    one = get(c, f"/agents/{ident}/screenings", page_size=1)
    assert [s["screening_id"] for s in one["items"]] == ["s-2"] and one["next_cursor"]
    rest = get(c, f"/agents/{ident}/screenings", page_size=1, cursor=one["next_cursor"])
    assert [s["screening_id"] for s in rest["items"]] == ["s-1"] and rest["next_cursor"] is None


def test_a_screening_page_gives_each_task_by_round(screened: tuple[Collector, str]) -> None:
    c, ident = screened
    found = get(c, f"/agents/{ident}/screenings/s-1")
    tasks = {t["task_id"]: t for t in found["tasks"]}
    assert sorted(tasks) == [t["task_id"] for t in found["tasks"]]  # sorted by task id
    assert tasks["t0"]["outcomes"] == [True, False, True]
    assert tasks["t0"]["error_classes"] == {"http_error": 1, "none": 2}
    assert (tasks["t0"]["runs"], tasks["t0"]["successes"]) == (3, 2)
    assert tasks["t3"]["latency_p50_ms"] == 320.0 and tasks["t3"]["steps_p50"] == 1.0
    assert found["radar"]["runs_counted"] == 30 and found["pass_1"] is not None
    assert c.http.get(f"{c.http_url}/api/v1/agents/{ident}/screenings/nope").status_code == 404


def test_the_run_views_filter_by_screening(screened: tuple[Collector, str]) -> None:
    c, ident = screened
    runs = get(c, "/runs", agent_id=ident, screening="s-2", page_size=100)["items"]
    assert len(runs) == 30 and {r["screening_id"] for r in runs} == {"s-2"}
    assert get(c, f"/agents/{ident}/fitness", screening="s-2")["runs_counted"] == 30
    assert get(c, f"/agents/{ident}/reliability", screening="s-1")["pass_1"] is not None
    slow = get(c, f"/agents/{ident}/diagnostics", screening="s-2")
    assert {o["run_id"] for o in slow["axes"]["latency"]["offenders"]} <= {r["id"] for r in runs}


def test_compare_takes_screenings_as_sides(screened: tuple[Collector, str]) -> None:
    c, ident = screened
    result = get(c, f"/agents/{ident}/compare", base_screening="s-1", head_screening="s-2")
    assert result["axes"]["latency"]["verdict"] == "regressed" and result["regressed"]
    assert (result["base"]["version"], result["head"]["version"]) == ("1.0", "1.1")
    mixed = get(c, f"/agents/{ident}/compare", base="1.0", head_screening="s-2")
    assert mixed["axes"]["latency"] == result["axes"]["latency"]
    both = c.http.get(
        f"{c.http_url}/api/v1/agents/{ident}/compare",
        params={"base": "1.0", "base_screening": "s-1"},
    )
    assert both.status_code == 422
    unknown = c.http.get(
        f"{c.http_url}/api/v1/agents/{ident}/compare",
        params={"base_screening": "s-1", "head_screening": "nope"},
    )
    assert unknown.status_code == 422 and "nope" in unknown.json()["detail"]
