"""Every recording (the specification's corpus and the frameworks we recorded
ourselves) through both real doors is stored exactly once and gives the runs
of its ground truth.

One collector per database takes every recording four times: as recorded (its
own door, content type and encoding) under one owner, and through the other
door under a second owner, each request sent twice as an exporter's retry
would. Spans and runs are kept per owner, so both replays are judged apart with
no second server to start; so are the storage checks, which used to replay the
corpus five more times on collectors of their own (issue 43).

A trace may hold several runs: each agent's spans in a trace form that
agent's run (docs/runs.md), and a tool server that exports its own spans (an
MCP server) names its own agent. The ground truth is the run of the agent the
recording names (expected.json `service_name`); `span_count` there counts
every span of the trace, so it is compared with the spans stored in the
trace's runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import SCENARIOS, Payload, expected, no_usage_on_spans, span_identities
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.replay import replay_scenarios, send_as_recorded, send_through
from tests.untraced import untraced

COLUMNS = (
    "trace_id",
    "agent",
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
    with ExitStack() as stack:
        with untraced():  # the collector's threads and the senders; this thread's checks are traced
            c = stack.enter_context(running_collector(path, database_url=module_database_url))
            recorded_key = c.service.keys.create(AS_RECORDED)
            other_key = c.service.keys.create(OTHER_DOOR)

            def both_doors_twice(payload: Payload) -> None:
                other = "http" if payload.transport == "grpc" else "grpc"
                for _ in range(2):  # the second time as an exporter's retry
                    send_as_recorded(c, payload, key=recorded_key)
                    send_through(c, payload, other, key=other_key)

            replay_scenarios(SCENARIOS, both_doors_twice)
            c.settle()
        wanted = {key for s in SCENARIOS for key in named_runs(s)}

        def every_named_run_completed() -> bool:
            return all(
                wanted
                <= {k for k, r in runs_by_key(c, owner).items() if r["status"] == "completed"}
                for owner in (AS_RECORDED, OTHER_DOOR)
            )

        wait_for(every_named_run_completed)
        yield c


def stored_spans(collector: Collector, owner: str) -> set[tuple[str, str]]:
    return set(collector.query("SELECT trace_id, span_id FROM spans WHERE owner = ?", owner))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_replay_as_recorded_stores_exactly_the_payload_spans(
    replayed: Collector, scenario: str
) -> None:
    sent = span_identities(scenario)
    traces = {trace for trace, _ in sent}  # no two scenarios share a trace
    stored = {(t, s) for t, s in stored_spans(replayed, AS_RECORDED) if t in traces}
    assert stored == sent


def test_every_payload_sent_twice_through_each_door_is_stored_once(replayed: Collector) -> None:
    expected_spans = set().union(*(span_identities(s) for s in SCENARIOS))
    for owner in (AS_RECORDED, OTHER_DOOR):
        count = replayed.query("SELECT count(*) FROM spans WHERE owner = ?", owner)[0][0]
        assert count == len(expected_spans), owner
        assert stored_spans(replayed, owner) == expected_spans, owner


def named_runs(scenario: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(trace id, agent name) -> the ground truth of the run the recording names."""
    return {
        (trace, want["service_name"]): want for trace, want in expected(scenario)["runs"].items()
    }


def runs_by_key(collector: Collector, owner: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(trace id, agent name) -> the stored run; `trace_spans` is the spans stored in
    every run of its trace."""
    columns = ", ".join(f"r.{c}" if c != "agent" else "a.name" for c in COLUMNS)
    rows = collector.query(
        f"SELECT {columns} FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.owner = ?",
        owner,
    )
    found = {(row[0], row[1]): dict(zip(COLUMNS, row, strict=True)) for row in rows}
    per_trace: dict[str, int] = {}
    for run in found.values():
        per_trace[run["trace_id"]] = per_trace.get(run["trace_id"], 0) + run["span_count"]
    for run in found.values():
        run["trace_spans"] = per_trace[run["trace_id"]]
    return found


@pytest.mark.parametrize("door", ["as recorded", "other door"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_runs_match_ground_truth(replayed: Collector, scenario: str, door: str) -> None:
    truth = named_runs(scenario)
    runs = runs_by_key(replayed, AS_RECORDED if door == "as recorded" else OTHER_DOOR)
    assert set(truth) <= set(runs), f"{scenario}: runs missing for {sorted(set(truth) - set(runs))}"
    silent = no_usage_on_spans(scenario)
    wrong = [
        f"{scenario} run {want['run_index']} ({want['task_id']}, trace {key[0]}): {miss}"
        for key, want in truth.items()
        if (miss := mismatches(runs[key], want, tokens=want["run_index"] not in silent))
    ]
    assert wrong == [], "\n".join(wrong)


def test_no_recording_leaves_a_trace_without_its_run(replayed: Collector) -> None:
    traces = {t for s in SCENARIOS for t in expected(s)["runs"]}
    for owner in (AS_RECORDED, OTHER_DOOR):
        assert {trace for trace, _ in runs_by_key(replayed, owner)} == traces


def mismatches(got: dict[str, Any], want: dict[str, Any], *, tokens: bool) -> list[str]:
    """Every field of a stored run that differs from the ground truth, as `name got!=want`.
    Tokens are held wherever the recording's LLM spans carry usage (`tokens`); a run
    whose spans report none read 0, as a failed call that used none does."""
    pairs = [
        ("status", got["status"], "completed"),
        ("task_id", got["task_id"], want["task_id"]),
        ("success", None if got["success"] is None else bool(got["success"]), want["success"]),
        ("steps", got["steps"], want["tool_calls"]),
        ("llm_calls", got["llm_calls"], want["llm_calls"]),
        ("span_count", got["trace_spans"], want["span_count"]),
    ]
    if tokens:
        pairs.append(("input_tokens", got["input_tokens"] or 0, want["input_tokens"]))
        pairs.append(("output_tokens", got["output_tokens"] or 0, want["output_tokens"]))
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
