"""A trace whose first spans were stored before its rows were merged into the
key indexes (SQLite, storage/recent_keys.py) and the rest after: one run,
read the same way through the API before and after."""

from __future__ import annotations

from typing import Any

from bench.support.otlp import chat_awaiting_its_root, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector

API = "/api/v1"


def read(c: Collector, path: str) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}", headers={"x-api-key": c.key})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_trace_continued_after_a_merge_is_one_run_read_alike_before_and_after(
    collector: Collector,
) -> None:
    trace_id, root = new_trace_id(), new_span_id()
    child = chat_awaiting_its_root(trace_id, root)
    assert collector.post(request([child]).SerializeToString()).status_code == 200
    collector.settle()
    [(run_id,)] = collector.query("SELECT id FROM runs WHERE trace_id = ?", trace_id.hex())
    assert read(collector, f"/runs/{run_id}")["status"] == "running"
    assert len(read(collector, f"/runs/{run_id}/trace")["spans"]) == 1

    with collector.service.db.writing() as session:  # what the sweeper does past a threshold
        session.merge_key_tails(force=True)
    assert collector.query("SELECT count(*) FROM runs WHERE NOT merged") == [(0,)]
    late = span(trace_id, root, "badge.run", attributes={"badge.run.success": True})
    _, call = collector.export_grpc(request([late]).SerializeToString())
    assert call.code().name == "OK"
    collector.settle()

    assert collector.query("SELECT count(*) FROM traces WHERE trace_id = ?", trace_id.hex()) == [
        (1,)
    ]
    assert collector.query(
        "SELECT id, status, span_count FROM runs WHERE trace_id = ?", trace_id.hex()
    ) == [(run_id, "completed", 2)]
    assert read(collector, f"/runs/{run_id}")["status"] == "completed"
    tree = read(collector, f"/runs/{run_id}/trace")
    assert [s["name"] for s in tree["spans"]] == ["badge.run"]
    assert [s["name"] for s in tree["spans"][0]["children"]] == ["chat"]
