"""deploy/'s Grafana dashboard and Prometheus alert rules: they parse, take
their datasource from a variable, and every PromQL expression names only
metrics a collector's /metrics exports (a renamed gauge fails here, not on a
dashboard that silently shows "No data")."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from collector.agent_metrics import exposition
from collector.metrics import Metrics
from collector.storage.board_recent import RecentAgent

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DASHBOARD = DEPLOY / "grafana-agent-fitness.json"
ALERTS = DEPLOY / "prometheus-alerts.yml"
# PromQL words that are not metric names (functions are told by their "(").
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"}
GROUPING = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)"


def exported() -> set[str]:
    """Every sample name /metrics can hold: the collector's own metrics and
    the agent gauges of an agent with every value present."""
    row = RecentAgent("id", "acme", "bot", 3, 2, 1, 1.0, 50.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    text = Metrics().render().decode() + exposition([row], truncated=False).decode()
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: label matchers, ranges,
    grouping clauses and strings removed, function names and keywords left out."""
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", expr)
    expr = re.sub(GROUPING, " ", expr)
    names = set()
    for match in re.finditer(r"(?<![\w$.])[A-Za-z_:][A-Za-z0-9_:]*", expr):
        if expr[match.end() :].lstrip().startswith("(") or match.group() in KEYWORDS:
            continue
        names.add(match.group())
    return names


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def dashboard_queries() -> Iterator[str]:
    """Every panel target's expression and every query variable's query
    (label_values(metric, label): the metric)."""
    for panel in dashboard()["panels"]:
        for target in panel["targets"]:
            yield target["expr"]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            found = re.fullmatch(r"label_values\((.+),\s*\w+\)", variable["query"])
            assert found, variable["query"]
            yield found.group(1)


def alert_queries() -> Iterator[str]:
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            yield rule["expr"]


def test_the_name_finder_sees_metrics_and_nothing_else() -> None:
    expr = (
        'max by (owner, agent) (max_over_time(badge_a{x=~"$y"}[1h])) - badge_b offset 1h > 10'
        " * count(badge_c) and on (owner) rate(badge_d_total[$__rate_interval]) > 1e3"
    )
    assert metric_names(expr) == {"badge_a", "badge_b", "badge_c", "badge_d_total"}


@pytest.mark.parametrize("source", ["dashboard", "alerts"])
def test_every_query_names_only_exported_metrics(source: str) -> None:
    queries = list(dashboard_queries() if source == "dashboard" else alert_queries())
    names = exported()
    assert queries
    for expr in queries:
        read = metric_names(expr)
        assert read, f"no metric in {expr!r}"
        assert read <= names, f"{sorted(read - names)} not exported, in {expr!r}"


def test_the_dashboard_takes_its_datasource_from_a_variable() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    expected = {"type": "prometheus", "uid": "${datasource}"}
    for panel in board["panels"]:
        assert panel["datasource"] == expected, panel["title"]
        assert all(t["datasource"] == expected for t in panel["targets"]), panel["title"]
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == expected
    assert board["id"] is None and board["uid"] and board["title"]  # importable anywhere
