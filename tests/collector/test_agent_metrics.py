"""The agent gauges: their text as Prometheus's own parser reads it back, a bound
of 0, and a database that cannot answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collector.agent_metrics import MAX_LABEL_CHARS, MAX_TEXT_BYTES, AgentGauges, exposition
from collector.storage.board_recent import RecentAgent
from collector.storage.engine import Database, open_database
from scoring import policy

HOSTILE = 'a "quoted"\\ name\nwith a newline, {braces}, é and 🦜'


def agent(name: str = "bot", **values: Any) -> RecentAgent:
    row = RecentAgent(
        agent_id="0b6e4c52-8a2f-5b43-9d1e-7f0a1c2d3e4f",
        owner="acme",
        name=name,
        total_runs=12,
        completed_runs=10,
        graded_runs=4,
        last_run_at=1_790_000_000.5,
        composite_score=81.25,
        correctness=90.0,
        latency=None,
        cost=72.5,
        tool_efficiency=100.0,
        robustness=None,
    )
    return row._replace(**values)


def parsed(text: bytes) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text.decode()):
        assert family.type == "gauge" and family.documentation
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_labels_read_back_exactly_whatever_the_name() -> None:
    samples = parsed(exposition([agent(HOSTILE), agent("plain")], truncated=False))
    names = {labels["agent"] for labels, _ in samples["badge_agent_runs"]}
    assert names == {HOSTILE, "plain"}


def test_values_read_back_exactly_and_null_ones_are_absent() -> None:
    samples = parsed(exposition([agent(completed_runs=0, composite_score=None)], truncated=True))
    assert samples["badge_agent_runs"][0][1] == 12
    assert samples["badge_agent_last_run_timestamp_seconds"][0][1] == 1_790_000_000.5
    assert "badge_agent_composite_score" not in samples  # null: no sample, never NaN
    assert "badge_agent_verified_ratio" not in samples  # no completed run: no share
    axes = {labels["axis"]: value for labels, value in samples["badge_agent_radar_score"]}
    assert axes == {"correctness": 90.0, "cost": 72.5, "tool_efficiency": 100.0}
    assert samples["badge_agent_metrics_truncated"] == [({}, 1.0)]


def test_the_verified_share_is_graded_over_completed() -> None:
    samples = parsed(exposition([agent(graded_runs=1, completed_runs=3)], truncated=False))
    assert samples["badge_agent_verified_ratio"][0][1] == 1 / 3


def test_every_radar_axis_is_a_board_column_the_read_selects() -> None:
    assert set(policy.RADAR_AXES) <= set(RecentAgent._fields)


class NoReads:
    """A database any read of fails the test."""

    @property
    def reader(self) -> None:
        pytest.fail("a bound of 0 read the database")


def test_a_bound_of_zero_exports_no_agent_gauge_and_reads_nothing() -> None:
    gauges = AgentGauges(cast(Database, NoReads()), lambda: 0.0, max_agents=0, window_s=86_400.0)
    assert gauges.render() == b""


def test_a_database_that_cannot_answer_leaves_the_agent_gauges_out(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'no-schema.db'}")
    try:  # no agent_board table: the query fails as with the database down
        gauges = AgentGauges(db, lambda: 0.0, max_agents=10, window_s=86_400.0)
        assert gauges.render() == b""
    finally:
        db.dispose()


def test_a_long_name_is_cut_in_its_label_and_still_reads_back() -> None:
    long = HOSTILE * 1000  # past the 16 KiB value limit: what a service.name may hold
    samples = parsed(exposition([agent(long, owner="o" * 500)], truncated=False))
    [(labels, _)] = samples["badge_agent_runs"]
    assert labels["agent"] == long[: MAX_LABEL_CHARS - 3] + "..."
    assert labels["owner"] == "o" * (MAX_LABEL_CHARS - 3) + "..."
    assert labels["agent_id"] == agent().agent_id
    assert (
        parsed(exposition([agent("x" * MAX_LABEL_CHARS)], False))["badge_agent_runs"][0][0]["agent"]
        == "x" * MAX_LABEL_CHARS
    )  # not cut at the bound itself


def test_the_text_stops_at_its_bound_leaving_the_least_recent_out() -> None:
    rows = [agent(f"a{i:03d}", agent_id=f"id-{i}") for i in range(50)]  # most recent first
    whole = exposition(rows, truncated=False)
    bound = len(whole) // 2
    cut_text = exposition(rows, truncated=False, max_bytes=bound)
    assert len(cut_text) <= bound
    samples = parsed(cut_text)
    kept = [labels["agent"] for labels, _ in samples["badge_agent_runs"]]
    assert 20 <= len(kept) < 50 and kept == [f"a{i:03d}" for i in range(len(kept))]
    assert samples["badge_agent_metrics_truncated"] == [({}, 1.0)]
    assert len(whole) <= MAX_TEXT_BYTES  # the default bound leaves these alone
    assert parsed(whole)["badge_agent_metrics_truncated"] == [({}, 0.0)]
