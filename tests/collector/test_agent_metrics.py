"""The agent gauges: their text as Prometheus's own parser reads it back, a bound
of 0, and a database that cannot answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collector.agent_metrics import AgentGauges, exposition
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
