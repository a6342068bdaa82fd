"""Every recording (the specification's corpus and the frameworks we recorded
ourselves) through both real doors matches its ground truth.

One collector per database takes every recording twice: as recorded (its
own door, content type and encoding) under one owner, and through the other
door under a second owner. Runs are kept per owner, so both replays are
judged apart with no second server to start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import SCENARIOS, expected, payloads
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.replay import send_as_recorded, send_through

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
AS_RECORDED, OTHER_DOOR = "as-recorded-owner", "other-door-owner"


@pytest.fixture(scope="module")
def replayed(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> Iterator[Collector]:
    path = Path(tmp_path_factory.mktemp("corpus"))
    with running_collector(path, database_url=module_database_url) as c:
        recorded_key = c.service.keys.create(AS_RECORDED)
        other_key = c.service.keys.create(OTHER_DOOR)
        for scenario in SCENARIOS:
            for payload in payloads(scenario):
                send_as_recorded(c, payload, key=recorded_key)
                other = "http" if payload.transport == "grpc" else "grpc"
                send_through(c, payload, other, key=other_key)
        c.settle()
        total = sum(len(expected(s)["runs"]) for s in SCENARIOS)
        wait_for(
            lambda: (
                c.query("SELECT count(*) FROM runs WHERE status = 'completed'")[0][0] >= 2 * total
            )
        )
        yield c


def runs_by_trace(collector: Collector, owner: str) -> dict[str, dict[str, Any]]:
    rows = collector.query(f"SELECT {', '.join(COLUMNS)} FROM runs WHERE owner = ?", owner)
    return {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows}


@pytest.mark.parametrize("door", ["as recorded", "other door"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_runs_match_ground_truth(replayed: Collector, scenario: str, door: str) -> None:
    truth = expected(scenario)["runs"]
    runs = runs_by_trace(replayed, AS_RECORDED if door == "as recorded" else OTHER_DOOR)
    assert set(truth) <= set(runs), f"{scenario}: runs missing for {sorted(set(truth) - set(runs))}"
    wrong = [
        f"{scenario} run {want['run_index']} ({want['task_id']}, trace {trace_id}): {miss}"
        for trace_id, want in truth.items()
        if (miss := mismatches(runs[trace_id], want))
    ]
    assert wrong == [], "\n".join(wrong)


def test_no_recording_leaves_a_trace_without_its_run(replayed: Collector) -> None:
    traces = {t for s in SCENARIOS for t in expected(s)["runs"]}
    for owner in (AS_RECORDED, OTHER_DOOR):
        assert set(runs_by_trace(replayed, owner)) == traces


def mismatches(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Every field of a stored run that differs from the ground truth, as `name got!=want`."""
    pairs = [
        ("status", got["status"], "completed"),
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
    from bench.support.otlp import simple_trace

    with running_collector(
        tmp_path, assembly_delay_s=60, database_url=database_url
    ) as c:  # recomputer kept idle
        body = simple_trace(tools=2)
        assert c.post(body.SerializeToString()).status_code == 200
        assert c.query("SELECT status, steps, llm_calls FROM runs") == [("completed", 2, 1)]
