"""The improvement loop end to end: the real SDK exporter sends two versions of
an agent; versions, compare and diagnostics answer from them, over HTTP and
from the CLI (docs/loop.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from bench.support.servers import cli
from tests.integration.harness import Collector, running_collector, wait_for

API = "/api/v1"
T0 = 1_790_000_000_000_000_000
TASKS, ROUNDS = 10, 3  # a suite of ten tasks screened three times per version


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
        attributes = {"badge.task.id": f"t{i % TASKS}", "badge.run.success": i not in failing}
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
    """Ten tasks, three rounds. Version 1.0: fast, every run passing. Version 2.0:
    1.8 s slower on every task, and task t0 broken (fails all three rounds)."""
    path = Path(tmp_path_factory.mktemp("loop"))
    runs = TASKS * ROUNDS
    with running_collector(path, database_url=module_database_url) as c:
        send_version(c, "1.0", [200.0 + i for i in range(runs)], failing=set())
        later = T0 + 10**12  # 2.0 runs after 1.0
        broken = {i for i in range(runs) if i % TASKS == 0}
        send_version(c, "2.0", [2000.0 + i for i in range(runs)], failing=broken, first=later)
        c.settle()
        wait_for(
            lambda: c.query("SELECT count(*) FROM runs WHERE status='completed'")[0][0] == 2 * runs
        )
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
        ("2.0", 30, 27),
        ("1.0", 30, 30),
    ]
    stats_v1 = get(c, f"/agents/{ident}/stats", version="1.0")
    assert items[1]["composite_score"] == stats_v1["composite_score"]
    assert stats_v1["total_runs"] == 30 and stats_v1["success_rate"] == 1.0
    assert get(c, f"/agents/{ident}/stats")["total_runs"] == 60  # unfiltered


def test_compare_finds_the_latency_regression_with_hand_computed_p_values(
    loop: tuple[Collector, str],
) -> None:
    c, ident = loop
    result = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0")
    # Latency, paired: each task's median moves by exactly 1,800 ms, so the ten
    # d tie: W = 55, mean 27.5, var = 10 x 11 x 21 / 24 - (1000 - 10) / 48.
    z_latency = 27.5 / math.sqrt(96.25 - 20.625)
    p_latency = math.erfc(z_latency / math.sqrt(2))
    latency = result["axes"]["latency"]
    assert (latency["test"], latency["paired_tasks"]) == ("wilcoxon_signed_rank", 10)
    assert latency["p_value"] == round(p_latency, 6)
    # Correctness, CMH by task: only t0 varies (3/3 then 0/3): E = 1.5, V = 81 / 180.
    z_correct = -1.5 / math.sqrt(81 / 180)
    p_correct = math.erfc(abs(z_correct) / math.sqrt(2))
    correctness = result["axes"]["correctness"]
    assert (correctness["test"], correctness["paired_tasks"]) == ("cochran_mantel_haenszel", 10)
    assert correctness["p_value"] == round(p_correct, 6)
    assert (correctness["base"], correctness["head"]) == (100.0, 90.0)
    # Holm over the four axes with a p-value (cost has no value on either side):
    # tool efficiency and robustness did not move (p = 1).
    assert result["axes"]["cost"]["verdict"] == "insufficient_evidence"
    assert result["axes"]["cost"]["p_adjusted"] is None
    assert latency["p_adjusted"] == round(4 * p_latency, 6)
    assert correctness["p_adjusted"] == round(3 * p_correct, 6)
    assert latency["verdict"] == "regressed"
    assert correctness["verdict"] == "unchanged"  # 0.025 alone; not after Holm
    assert "pairs" not in latency  # the evidence only when asked for
    assert result["regressed"] is True
    assert {t["task_id"]: t["change"] for t in result["tasks"]} == {
        f"t{i}": "broken" if i == 0 else "same" for i in range(TASKS)
    }
    assert result["base"]["version"] == "1.0" and result["head"]["runs_counted"] == 30
    for side, version in (("base", "1.0"), ("head", "2.0")):  # the same numbers as each view
        stats = get(c, f"/agents/{ident}/stats", version=version)
        repeat = get(c, f"/agents/{ident}/reliability", version=version)
        assert result[side]["composite_score"] == stats["composite_score"] is not None
        assert result[side]["success_rate"] == stats["success_rate"]
        assert (result[side]["pass_1"], result[side]["pass_3"]) == (
            repeat["pass_1"],
            repeat["pass_3"],
        )
    assert result["head"]["success_rate"] == 0.9 and result["head"]["pass_1"] == 0.9
    # without base and head: the two newest versions, head the newest
    assert get(c, f"/agents/{ident}/compare") == result
    # with one side named: the newest other version is the other side
    swapped = get(c, f"/agents/{ident}/compare", base="2.0")
    assert (swapped["base"]["version"], swapped["head"]["version"]) == ("2.0", "1.0")
    assert swapped["axes"]["latency"]["verdict"] == "improved"
    assert swapped["axes"]["latency"]["p_adjusted"] == latency["p_adjusted"]


def test_compare_gives_the_paired_tasks_behind_each_verdict_when_asked(
    loop: tuple[Collector, str],
) -> None:
    c, ident = loop
    plain = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0")
    result = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0", evidence="true")
    latency = result["axes"]["latency"]
    assert [pair["task_id"] for pair in latency["pairs"]] == sorted(f"t{i}" for i in range(TASKS))
    assert {pair["delta"] for pair in latency["pairs"]} == {1800.0}
    t0 = next(p for p in result["axes"]["correctness"]["pairs"] if p["task_id"] == "t0")
    assert (t0["base"], t0["head"]) == (1.0, 0.0)
    assert result["axes"]["cost"]["needed"] == (
        "0 paired tasks, need 5; unpaired: 0 / 0 values on base / head, need 5 each"
    )
    for axis, change in result["axes"].items():  # otherwise the same answer
        assert {k: v for k, v in change.items() if k not in ("pairs", "needed")} == plain["axes"][
            axis
        ]


def test_a_min_effect_holds_verdicts_to_a_smallest_change_in_axis_points(
    loop: tuple[Collector, str],
) -> None:
    """Latency 100.0 -> 69.71 (p50 2014.5 ms): regressed up to min_effect 30.29,
    unchanged from 30.3 on; the p-values stay (docs/loop.md "Small changes")."""
    c, ident = loop
    plain = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0")
    assert plain["min_effect"] == 0.0 and plain["axes"]["latency"]["delta"] == -30.29
    at = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0", min_effect="30.29")
    assert at["axes"]["latency"]["verdict"] == "regressed" and at["regressed"] is True
    past = get(c, f"/agents/{ident}/compare", base="1.0", head="2.0", min_effect="30.3")
    assert past["min_effect"] == 30.3 and past["regressed"] is False
    assert past["axes"]["latency"] == {**plain["axes"]["latency"], "verdict": "unchanged"}
    for bad in ("-1", "inf", "-inf", "nan", "NaN", "1e999", "lots"):
        reply = c.http.get(
            f"{c.http_url}{API}/agents/{ident}/compare",
            params={"base": "1.0", "head": "2.0", "min_effect": bad},
        )
        assert reply.status_code == 422, (bad, reply.text)
        assert "min_effect" in json.dumps(reply.json()["detail"])
    url = ["--url", c.http_url]
    direct = ["--database-url", c.service.settings.database_url]
    for source in (url, direct):
        gated = cli(
            "compare", "loop-agent", "--fail-on-regression", "--min-effect", "30.3", *source
        )
        assert "no regression" in gated.stdout
        assert "at least 30.3 points" in gated.stdout
        held = cli("compare", "loop-agent", "--fail-on-regression", "--min-effect", "30.29",
                   *source, check=False)  # fmt: skip
        assert held.returncode == 1 and "REGRESSED" in held.stdout
        for bad in ("-0.5", "nan", "inf"):
            refused = cli("compare", "loop-agent", "--min-effect", bad, *source, check=False)
            assert refused.returncode == 2 and "a finite number >= 0" in refused.stderr


def test_diagnostics_point_at_the_slow_and_failed_runs(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    found = get(c, f"/agents/{ident}/diagnostics", version="2.0", limit=3)
    assert found["weakest_axis"] == "latency"
    slowest = found["axes"]["latency"]["offenders"]
    assert [o["value"] for o in slowest] == [2029.0, 2028.0, 2027.0]
    assert {o["version"] for o in slowest} == {"2.0"}
    failed = found["axes"]["correctness"]["offenders"]
    assert len(failed) == 3 and all(o["value"] is False for o in failed)
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
    assert everything["total_runs"] == 60
    nothing = get(c, f"/agents/{ident}/stats", until="2000-01-01T00:00:00Z")
    assert nothing["total_runs"] == 0 and nothing["composite_score"] is None
    assert get(c, f"/agents/{ident}/fitness", until="2000-01-01T00:00:00Z")["runs_counted"] == 0


def test_since_and_until_go_by_the_collectors_clock_not_the_span_times(
    loop: tuple[Collector, str],
) -> None:
    """The runs' spans are dated September 2026 (T0); they became terminal today."""
    c, ident = loop
    kept = get(c, f"/agents/{ident}/stats", since="2026-11-01T00:00:00Z")
    assert kept["total_runs"] == 60
    span_window = get(c, f"/agents/{ident}/stats", until="2026-11-01T00:00:00Z")
    assert span_window["total_runs"] == 0


def test_run_summaries_and_offenders_carry_both_end_times(loop: tuple[Collector, str]) -> None:
    c, ident = loop
    runs = {r["id"]: r for r in get(c, "/runs", agent_id=ident, page_size=100)["items"]}
    some = next(iter(runs.values()))
    assert some["ended_at"].startswith("2026-09-21")  # the root span's end
    assert some["terminal_at"] is not None and some["terminal_at"] > "2026-11"
    found = get(c, f"/agents/{ident}/diagnostics", version="2.0", limit=3)
    for offender in found["axes"]["latency"]["offenders"]:
        summary = runs[offender["run_id"]]
        assert offender["ended_at"] == summary["ended_at"]
        assert offender["terminal_at"] == summary["terminal_at"]


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
        # The CLI compares named versions only, unless asked for `none` (docs/loop.md).
        for source in (["--url", c.http_url], ["--database-url", c.service.settings.database_url]):
            alone = cli("compare", "loop-agent", *source, check=False)
            assert alone.returncode == 2, alone.stdout
            assert "1 named version(s); compare needs two" in alone.stderr
            asked = cli("compare", "loop-agent", "--base", "none", "--head", "1.0", *source)
            assert "unchanged" in asked.stdout


def test_compare_takes_base_and_head_together_or_not_at_all(loop: tuple[Collector, str]) -> None:
    c, _ = loop
    for source in (["--url", c.http_url], ["--database-url", c.service.settings.database_url]):
        for one in (["--base", "2.0"], ["--head", "1.0"]):
            alone = cli("compare", "loop-agent", *one, "--fail-on-regression", *source, check=False)
            assert alone.returncode == 2, alone.stdout
            assert alone.stdout == ""
            assert "--base and --head are given together or not at all" in alone.stderr


def test_compare_of_an_unknown_agent_exits_2_with_the_detail(loop: tuple[Collector, str]) -> None:
    c, _ = loop
    for source in (["--url", c.http_url], ["--database-url", c.service.settings.database_url]):
        unknown = cli("compare", "nobody", *source, check=False)
        assert unknown.returncode == 2 and "no agent named 'nobody'" in unknown.stderr
