"""A screening's plan (docs/screening.md "Incomplete screenings"): POST /api/v1/screenings
records what a screener is about to dispatch, and the screening shows itself incomplete
until a run is stored for every planned task and round; a used id is refused unless
resumed. And every stored screening opens by its own id, whatever it holds (issue 42
item 16)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, wait_for

API = "/api/v1"
TASKS = ["refund", "greet", "track"]


def plan(c: Collector, key: str, sid: str = "s-1", **changes: Any) -> Any:
    body = {
        "agent": "planned-bot",
        "screening_id": sid,
        "suite_name": "support",
        "suite_digest": "d" * 64,
        "version": "1.0",
        "rounds": 2,
        "tasks": TASKS,
        **changes,
    }
    return c.http.post(
        f"{c.http_url}{API}/screenings", json=body, headers={"authorization": f"Bearer {key}"}
    )


def root(
    c: Collector, key: str, sid: str, task: str, round_: int, agent: str = "planned-bot"
) -> None:
    """The root span `screen` sends for one dispatch."""
    trace_id, root_id = new_trace_id(), new_span_id()
    start = EPOCH_NS + round_ * 10**9
    attributes = {
        "badge.task.id": task,
        "badge.run.id": f"{sid}/{task}/{round_}",
        "badge.run.success": True,
        "badge.screening.id": sid,
        "badge.screening.round": round_,
        "badge.suite.name": "support",
        "badge.suite.digest": "d" * 64,
    }
    spans = [
        span(trace_id, root_id, "badge.run", start=start, end=start + 10**8, attributes=attributes)
    ]
    reply = c.post(request(spans, agent).SerializeToString(), key=key)
    assert reply.status_code == 200, reply.text


def get(c: Collector, path: str) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}")
    assert reply.status_code == 200, reply.text
    return reply.json()


def listed(c: Collector, agent_id: str, sid: str) -> dict[str, Any]:
    [item] = [
        s for s in get(c, f"/agents/{agent_id}/screenings")["items"] if s["screening_id"] == sid
    ]
    return dict(item)


def test_a_planned_screening_is_incomplete_until_every_dispatch_has_its_run(
    collector: Collector,
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    made = plan(c, grader)
    assert made.status_code == 201, made.text
    receipt = made.json()
    assert receipt["created"] is True and receipt["planned_runs"] == 6
    assert receipt["stored_runs"] == 0
    assert receipt["missing"] == [{"task_id": t, "rounds": [1, 2]} for t in TASKS]
    agent_id = receipt["agent_id"]
    root(c, grader, "s-1", "refund", 1)  # the agent now exists: its list shows the plan
    c.settle()
    item = wait_for(lambda: listed(c, agent_id, "s-1") if c.query("SELECT 1 FROM agents") else None)
    assert (item["planned_runs"], item["stored_runs"], item["complete"]) == (6, 1, False)
    assert (item["planned_rounds"], item["planned_tasks"], item["rounds"]) == (2, 3, 1)
    detail = get(c, f"/agents/{agent_id}/screenings/s-1")
    assert detail["complete"] is False and [t["task_id"] for t in detail["tasks"]] == sorted(TASKS)
    greet = next(t for t in detail["tasks"] if t["task_id"] == "greet")
    assert greet["runs"] == 0 and greet["outcomes"] == [None, None]  # planned, no run yet
    for task in TASKS:
        for round_ in (1, 2):
            if (task, round_) != ("refund", 1):
                root(c, grader, "s-1", task, round_)
    root(c, grader, "s-1", "refund", 1)  # a dispatch sent twice fills no more than one
    c.settle()
    item = wait_for(lambda: listed(c, agent_id, "s-1")["complete"] and listed(c, agent_id, "s-1"))
    assert (item["stored_runs"], item["planned_runs"], item["total_runs"]) == (6, 6, 6)
    assert get(c, f"/agents/{agent_id}/screenings/s-1")["complete"] is True


def test_a_used_screening_id_is_refused_unless_resumed_with_the_same_plan(
    collector: Collector,
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    assert plan(c, grader).status_code == 201
    root(c, grader, "s-1", "greet", 2)
    c.settle()
    again = plan(c, grader)
    assert (
        again.status_code == 409 and "exists (1 of 6 planned runs stored)" in again.json()["detail"]
    )
    resumed = plan(c, grader, resume=True)
    assert resumed.status_code == 200, resumed.text
    body = resumed.json()
    assert body["created"] is False and body["stored_runs"] == 1
    assert body["missing"] == [
        {"task_id": "refund", "rounds": [1, 2]},
        {"task_id": "greet", "rounds": [1]},
        {"task_id": "track", "rounds": [1, 2]},
    ]
    for changed in (
        {"rounds": 3},
        {"suite_digest": "e" * 64},
        {"version": "2.0"},
        {"tasks": TASKS[:2]},
    ):
        refused = plan(c, grader, resume=True, **changed)
        assert refused.status_code == 409 and "was planned with" in refused.json()["detail"]
    # runs of a screening whose screener recorded no plan make the id used too
    root(c, grader, "unplanned", "greet", 1)
    c.settle()
    assert plan(c, grader, "unplanned").status_code == 409
    adopted = plan(c, grader, "unplanned", resume=True)
    assert adopted.status_code == 200 and adopted.json()["stored_runs"] == 1


def test_only_a_grader_key_records_a_plan_and_the_body_is_checked(collector: Collector) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    assert plan(c, c.key).status_code == 403  # an agent may not plan its own screening
    keyless = c.http.post(f"{c.http_url}{API}/screenings", json={})
    assert keyless.status_code in (401, 422)
    for bad in (
        {"tasks": ["a", "a"]},
        {"screening_id": "a/b"},
        {"rounds": 0},
        {"rounds": True},
        {"rounds": "3"},
        {"rounds": 2.5},
        {"tasks": []},
        {"agent": "x\x00y"},
    ):
        assert plan(c, grader, **bad).status_code == 422, bad
    assert c.query("SELECT count(*) FROM screening_plans")[0][0] == 0
    # JSON Schema's integer takes a whole number written as a double (schemathesis found it)
    assert plan(c, grader, "doubles", rounds=3.0).status_code == 201


ODD_IDS = ["a/b", "50%", "two words", "écran/ü ☃", "/leading", "q?x#y"]


def test_every_stored_screening_opens_by_its_own_id(collector: Collector) -> None:
    """Ids `screen` would never make, from a grader's own harness: the API and the
    dashboard open each one, percent-encoded, `/` as %2F."""
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    for sid in ODD_IDS:
        root(c, grader, sid, "greet", 1, agent="odd-bot")
    c.settle()
    [(agent_id,)] = c.query("SELECT id FROM agents")
    listed_ids = {s["screening_id"] for s in get(c, f"/agents/{agent_id}/screenings")["items"]}
    assert listed_ids == set(ODD_IDS)
    page = c.http.get(f"{c.http_url}/agents/{agent_id}/screenings").text
    for sid in ODD_IDS:
        path = f"/agents/{agent_id}/screenings/{quote(sid, safe='')}"
        assert get(c, path)["screening_id"] == sid
        assert f'href="{path}"' in page  # the list links to it, encoded the same way
        html = c.http.get(f"{c.http_url}{path}")
        assert html.status_code == 200 and "Screening" in html.text
    missing = c.http.get(f"{c.http_url}{API}/agents/{agent_id}/screenings/a%2Fc")
    assert missing.status_code == 404
