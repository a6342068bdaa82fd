"""A run of many steps and an agent of many versions answer in pages
(issue 29: a 300,000-step run's detail was 37 MB, 50,000 versions 9.4 MB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.support.otlp import agent_run
from tests.integration.harness import Collector, running_collector


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}/api/v1{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_run_of_many_steps_lists_its_tool_calls_a_page_at_a_time(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        assert c.post(agent_run(tools=1_200).SerializeToString()).status_code == 200
        c.settle()
        [(run_id,)] = c.query("SELECT id FROM runs")
        detail = get(c, f"/runs/{run_id}")
        assert detail["steps"] == 1_200 and len(detail["tool_calls"]) == 100
        seen = [call["span_id"] for call in detail["tool_calls"]]
        cursor = detail["tool_calls_next_cursor"]
        while cursor:
            page = get(c, f"/runs/{run_id}/tool-calls", page_size=300, cursor=cursor)
            seen += [call["span_id"] for call in page["items"]]
            cursor = page["next_cursor"]
        assert len(seen) == len(set(seen)) == 1_000  # the first 1,000 are kept, in order
        whole = get(c, f"/runs/{run_id}/tool-calls", page_size=500)
        assert [call["span_id"] for call in whole["items"]] == seen[:500]
        bad = c.http.get(f"{c.http_url}/api/v1/runs/{run_id}/tool-calls", params={"cursor": "x"})
        assert bad.status_code == 422


def test_versions_come_a_page_at_a_time_newest_first(tmp_path: Path, database_url: str) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        for version in ("1", "2", "3"):
            run = agent_run()
            run.resource_spans[0].resource.attributes.add(
                key="service.version"
            ).value.string_value = version
            assert c.post(run.SerializeToString()).status_code == 200
        c.settle()
        [(ident,)] = c.query("SELECT id FROM agents")
        first = get(c, f"/agents/{ident}/versions", page_size=2)
        assert len(first["items"]) == 2 and first["next_cursor"]
        rest = get(c, f"/agents/{ident}/versions", page_size=2, cursor=first["next_cursor"])
        assert len(rest["items"]) == 1 and rest["next_cursor"] is None
        names = {v["version"] for v in first["items"] + rest["items"]}
        assert names == {"1", "2", "3"}
