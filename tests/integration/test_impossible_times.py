"""One bad clock neither poisons an agent's averages nor pins its lists
(docs/runs.md "Impossible times"), through the real HTTP door and API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, running_collector

YEAR_2262_NS = 9_200_000_000 * 10**9


def send_run(c: Collector, task: str, start: int, end: int) -> str:
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span(trace_id, root, "badge.run", start=start, end=end, attributes={"badge.task.id": task}),
        span(
            trace_id,
            new_span_id(),
            "chat",
            parent=root,
            attributes={"gen_ai.operation.name": "chat"},
        ),
    ]
    assert c.post(request(spans).SerializeToString()).status_code == 200
    return trace_id.hex()


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}/api/v1{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_root_at_zero_and_one_in_2262_leave_averages_and_lists_alone(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        for i in range(5):
            start = EPOCH_NS + i * 10**10
            send_run(c, f"t{i}", start, start + 400_000_000)  # 400 ms each
        at_zero = send_run(c, "zero", 0, EPOCH_NS)
        far = send_run(c, "far", YEAR_2262_NS, YEAR_2262_NS + 10**9)
        c.settle()
        [(ident,)] = c.query("SELECT id FROM agents")
        stats = get(c, f"/agents/{ident}/stats")
        assert stats["total_runs"] == 7 and stats["avg_latency_ms"] == 400.0
        assert stats["latency_score"] == 1.0  # 400 ms: the full latency score
        newest = get(c, "/runs", agent_id=ident, page_size=7)["items"]
        by_trace = {run["trace_id"]: run for run in newest}
        for bad in (at_zero, far):
            assert by_trace[bad]["latency_ms"] is None
            assert by_trace[bad]["started_at"] >= "2026-12"  # when the collector got it
        [agent] = [a for a in get(c, "/agents", all="true")["items"] if a["id"] == ident]
        assert agent["last_run_at"] < "2100"
        run_id = by_trace[at_zero]["id"]
        tree = c.http.get(
            f"{c.http_url}/api/v1/runs/{run_id}/trace",
            headers={"authorization": f"Bearer {c.key}"},
        ).json()
        root = tree["spans"][0]
        assert root["name"] == "badge.run" and root["start"] == 0  # stored as sent
        assert "before 2000-01-01" in root["classification"]["clock"]
        assert root["children"][0]["classification"]["clock"] is None
