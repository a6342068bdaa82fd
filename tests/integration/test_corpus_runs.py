"""Every corpus scenario through the real receivers matches its ground truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.corpus import SCENARIOS, expected, payloads
from tests.integration.harness import Collector, wait_for
from tests.integration.replay import send_as_recorded

COLUMNS = (
    "trace_id",
    "status",
    "task_id",
    "success",
    "steps",
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "latency_ms",
    "span_count",
)


def runs_by_trace(collector: Collector) -> dict[str, dict[str, Any]]:
    rows = collector.query(f"SELECT {', '.join(COLUMNS)} FROM runs")
    return {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_runs_match_ground_truth(collector: Collector, scenario: str) -> None:
    truth = expected(scenario)
    for payload in payloads(scenario):
        send_as_recorded(collector, payload)
    collector.settle()
    runs = wait_for(
        lambda: (
            (r := runs_by_trace(collector))
            and all(r.get(t, {}).get("status") == "completed" for t in truth["runs"])
            and r
        )
    )
    assert set(runs) == set(truth["runs"])
    wrong = [
        f"{scenario} run {want['run_index']} ({want['task_id']}, trace {trace_id}): {miss}"
        for trace_id, want in truth["runs"].items()
        if (miss := mismatches(runs[trace_id], want))
    ]
    assert wrong == [], "\n".join(wrong)


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Every field of a stored run that differs from the ground truth, as `name got!=want`."""
    pairs = [
        ("task_id", got["task_id"], want["task_id"]),
        ("success", None if got["success"] is None else bool(got["success"]), want["success"]),
        ("steps", got["steps"], want["tool_calls"]),
        ("llm_calls", got["llm_calls"], want["llm_calls"]),
        ("span_count", got["span_count"], want["span_count"]),
    ]
    if (got["input_tokens"], got["output_tokens"]) != (None, None):
        pairs.append(("input_tokens", got["input_tokens"], want["input_tokens"]))
        pairs.append(("output_tokens", got["output_tokens"], want["output_tokens"]))
    found = [f"{name} {a!r}!={b!r}" for name, a, b in pairs if a != b]
    if got["latency_ms"] is None or abs(got["latency_ms"] - want["root_duration_ms"]) > 1.0:
        found.append(f"latency_ms {got['latency_ms']!r}!={want['root_duration_ms']!r}")
    return found


def test_a_trace_sent_in_one_request_has_its_run_when_the_export_is_answered(
    tmp_path: Path, database_url: str
) -> None:
    from tests.integration.harness import running_collector
    from tests.otlp_builders import simple_trace

    with running_collector(
        tmp_path, assembly_delay_s=60, database_url=database_url
    ) as c:  # recomputer kept idle
        body = simple_trace(tools=2)
        assert c.post(body.SerializeToString()).status_code == 200
        assert c.query("SELECT status, steps, llm_calls FROM runs") == [("completed", 2, 1)]
