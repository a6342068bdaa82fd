"""The improvement loop end to end: the real SDK exporter sends two versions of
an agent; versions, compare and diagnostics answer from them, over HTTP and
from the CLI (docs/loop.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.processes import cli

API = "/api/v1"
T0 = 1_790_000_000_000_000_000


def send_version(
    c: Collector,
    version: str | None,
    latencies_ms: list[float],
    failing: set[int],
    first: int = T0,
) -> None:
    """One run per latency through the SDK's OTLP/HTTP exporter: root > agent > tool."""
    exporter = OTLPSpanExporter(
        endpoint=f"{c.http_url}/v1/traces", headers={"authorization": f"Bearer {c.key}"}
    )
    resource = {"service.name": "loop-agent"}
    if version is not None:
        resource["service.version"] = version
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests")
    for i, latency in enumerate(latencies_ms):
        start = first + i * 10**10
        attributes = {"badge.task.id": f"t{i % 5}", "badge.run.success": i not in failing}
        root = tracer.start_span("badge.run", attributes=attributes, start_time=start)
        from opentelemetry import trace

        with trace.use_span(root, end_on_exit=False):
            agent = tracer.start_span(
                "invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}
            )
            with trace.use_span(agent, end_on_exit=False):
                tool = tracer.start_span(
                    "execute_tool", attributes={"gen_ai.operation.name": "execute_tool"}
                )
                tool.end()
            agent.end()
        root.end(end_time=start + int(latency * 1e6))
    provider.shutdown()


@pytest.fixture(scope="module")
def loop(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> Iterator[tuple[Collector, str]]:
    """Version 1.0: ten fast runs, all passing. Version 2.0: ten slow runs, two failing."""
    path = Path(tmp_path_factory.mktemp("loop"))
    with running_collector(path, database_url=module_database_url) as c:
        send_version(c, "1.0", [200.0 + i for i in range(10)], failing=set())
        later = T0 + 10**12  # 2.0 runs after 1.0
        send_version(c, "2.0", [2000.0 + i for i in range(10)], failing={0, 5}, first=later)
        c.settle()
        wait_for(lambda: c.query("SELECT count(*) FROM runs WHERE status='completed'")[0][0] == 20)
        [(ident,)] = c.query("SELECT id FROM agents WHERE name = 'loop-agent'")
        yield c, str(ident)


def get(c: Collector, path: str, **params: Any) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_versions_are_listed_newest_first_with_their_composite(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    items = get(c, f"/agents/{ident}/versions")["items"]
    assert [(v["version"], v["total_runs"], v["successful_runs"]) for v in items] == [
        ("2.0", 10, 8),
        ("1.0", 10, 10),
    ]
    stats_v1 = get(c, f"/agents/{ident}/stats", version="1.0")
    assert items[1]["composite_score"] == stats_v1["composite_score"]
    assert stats_v1["total_runs"] == 10 and stats_v1["success_rate"] == 1.0
    assert get(c, f"/agents/{ident}/stats")["total_runs"] == 20  # unfiltered


def test_compare_finds_the_latency_regression_with_hand_computed_p_values(
    loop: tuple[Collector, str],
) -> None:
    c, ident = loop
    result = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0")
    # Latency: head's ranks are 11..20 (sum 155), U = 155 - 55 = 100, mean 50,
    # variance 10 x 10 / 12 x 21 = 175; z = 50 / sqrt(175).
    z = 50 / math.sqrt(175)
    latency = result["axes"]["latency"]
    assert latency["verdict"] == "regressed"
    assert latency["p_value"] == round(math.erfc(z / math.sqrt(2)), 6)
    # Correctness: 10/10 then 8/10; pooled 0.9; z = -0.2 / sqrt(0.9 x 0.1 x 0.2).
    z = -0.2 / math.sqrt(0.9 * 0.1 * 0.2)
    correctness = result["axes"]["correctness"]
    assert correctness["verdict"] == "unchanged"
    assert correctness["p_value"] == round(math.erfc(abs(z) / math.sqrt(2)), 6)
    assert (correctness["base"], correctness["head"]) == (100.0, 80.0)
    assert result["regressed"] is True
    assert {t["task_id"]: t["change"] for t in result["tasks"]} == {
        "t0": "broken",
        "t1": "same",
        "t2": "same",
        "t3": "same",
        "t4": "same",
    }
    assert result["base"]["version"] == "1.0" and result["head"]["runs_counted"] == 10
    for side, version in (("base", "1.0"), ("head", "2.0")):  # the same numbers as each view
        stats = get(c, f"/agents/{ident}/stats", version=version)
        repeat = get(c, f"/agents/{ident}/reliability", version=version)
        assert result[side]["composite_score"] == stats["composite_score"] is not None
        assert result[side]["success_rate"] == stats["success_rate"]
        assert (result[side]["pass_1"], result[side]["pass_3"]) == (
            repeat["pass_1"],
            repeat["pass_3"],
        )
    assert result["head"]["success_rate"] == 0.8 and result["head"]["pass_1"] is None
    # without base and head: the two newest versions, head the newest
    assert get(c, f"/agents/{ident}/compare") == result
    # with one side named: the newest other version is the other side
    swapped = get(c, f"/agents/{ident}/compare", base="2.0")
    assert (swapped["base"]["version"], swapped["head"]["version"]) == ("2.0", "1.0")


def test_diagnostics_point_at_the_slow_and_failed_runs(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    found = get(c, f"/agents/{ident}/diagnostics", version="2.0", limit=3)
    assert found["weakest_axis"] == "latency"
    slowest = found["axes"]["latency"]["offenders"]
    assert [o["value"] for o in slowest] == [2009.0, 2008.0, 2007.0]
    assert {o["version"] for o in slowest} == {"2.0"}
    failed = found["axes"]["correctness"]["offenders"]
    assert len(failed) == 2 and all(o["value"] is False for o in failed)
    assert get(c, f"/agents/{ident}/diagnostics", version="1.0")["weakest_axis"] is None


def test_bad_loop_requests_get_clear_errors(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    base = f"{c.http_url}{API}/agents"
    unknown = c.http.get(f"{base}/{ident}/compare", params={"base": "1.0", "head": "9.9"})
    assert unknown.status_code == 422 and "9.9" in unknown.json()["detail"]
    for params in ({"since": "yesterday"}, {"until": "2026-11-01T00:00:00"}):
        assert c.http.get(f"{base}/{ident}/stats", params=params).status_code == 422
    for limit in (0, 101):
        reply = c.http.get(f"{base}/{ident}/diagnostics", params={"limit": limit})
        assert reply.status_code == 422
    nobody = "00000000-0000-0000-0000-000000000000"
    for view in ("versions", "compare", "diagnostics"):
        assert c.http.get(f"{base}/{nobody}/{view}").status_code == 404


def test_since_and_until_keep_runs_by_when_they_ended(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    everything = get(c, f"/agents/{ident}/stats", since="2000-01-01T00:00:00Z")
    assert everything["total_runs"] == 20
    nothing = get(c, f"/agents/{ident}/stats", until="2000-01-01T00:00:00Z")
    assert nothing["total_runs"] == 0 and nothing["composite_score"] is None
    assert get(c, f"/agents/{ident}/fitness", until="2000-01-01T00:00:00Z")["runs_counted"] == 0


def test_compare_on_the_command_line_gates_a_release(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    url = ["--url", c.http_url]
    regressed = cli("compare", "loop-agent", "--fail-on-regression", *url, check=False)
    assert regressed.returncode == 1, regressed.stderr
    assert "latency" in regressed.stdout and "REGRESSED" in regressed.stdout
    improved = cli(
        "compare",
        "loop-agent",
        "--base",
        "2.0",
        "--head",
        "1.0",
        "--fail-on-regression",
        *url,
        check=False,
    )
    assert improved.returncode == 0, improved.stderr
    assert "improved" in improved.stdout
    direct = cli(
        "compare", "loop-agent", "--database-url", c.service.settings.database_url, check=False
    )
    assert direct.returncode == 0 and direct.stdout == regressed.stdout
    diagnosis = cli("diagnose", "loop-agent", "--version", "2.0", *url)
    assert "weakest axis: latency" in diagnosis.stdout
    slowest = get(c, f"/agents/{ident}/diagnostics", version="2.0")["axes"]["latency"]
    run_id = slowest["offenders"][0]["run_id"]
    assert f"{c.http_url}/api/v1/runs/{run_id}/trace" in diagnosis.stdout  # how to open it


def test_compare_needs_two_versions(tmp_path: Path) -> None:
    with running_collector(tmp_path) as c:
        send_version(c, "1.0", [200.0] * 3, failing=set())
        c.settle()
        wait_for(lambda: c.query("SELECT count(*) FROM runs")[0][0] == 3)
        alone = cli("compare", "loop-agent", "--url", c.http_url, check=False)
        assert alone.returncode == 2 and "compare needs two" in alone.stderr


def test_runs_without_a_version_compare_as_none(tmp_path: Path) -> None:
    with running_collector(tmp_path) as c:
        send_version(c, None, [300.0 + i for i in range(6)], failing=set())
        send_version(c, "1.0", [300.0 + i for i in range(6)], failing=set(), first=T0 + 10**12)
        c.settle()
        wait_for(lambda: c.query("SELECT count(*) FROM runs WHERE status='completed'")[0][0] == 12)
        [(ident,)] = c.query("SELECT id FROM agents WHERE name = 'loop-agent'")
        listed = get(c, f"/agents/{ident}/versions")["items"]
        assert [v["version"] for v in listed] == ["1.0", None]  # no version: last
        result = get(c, f"/agents/{ident}/compare", base="none", head="1.0")
        assert result["base"]["version"] is None and result["base"]["runs_counted"] == 6
        assert result["axes"]["latency"]["verdict"] == "unchanged"
        assert get(c, f"/agents/{ident}/compare") == result  # the two newest: 1.0 and none
