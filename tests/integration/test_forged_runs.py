"""What a grader key recorded stays the grader's (issue 37 items 1-3; docs/runs.md
"Runs a grader recorded", docs/screening.md "What the agent cannot change").

The agent under test holds a key of its own owner (an agent key) and sees the
screener's `traceparent` and `baggage`. Each test here is one way it tried to
rewrite its graded screened runs, in both arrival orders (the forger sending
first and sending last), on both databases: the graded run, its screening and
its figures must come out as the grader recorded them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from collector.assembly.identity import agent_id
from collector.assembly.membership import run_id_for
from tests.integration.harness import RUN_OUTCOME_COLUMNS, Collector, running_collector

API = "/api/v1"
AGENT = "screened-bot"
SID = "s-1"
ORDERS = ["grader-first", "forger-first"]
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m",
    "gen_ai.usage.input_tokens": 100,
    "gen_ai.usage.output_tokens": 10,
}


def screened_attributes(
    task: str, round_: int, success: bool, sid: str = SID, run_key: str | None = None
) -> dict[str, Any]:
    """The attributes `screen` puts on a run's root (docs/screening.md)."""
    return {
        "badge.task.id": task,
        "badge.run.id": run_key or f"{sid}/{task}/{round_}",
        "badge.run.success": success,
        "badge.run.status": "completed",
        "badge.screening.id": sid,
        "badge.screening.round": round_,
        "badge.suite.name": "support",
        "badge.suite.digest": "d" * 64,
        "badge.grader": "exact",
    }


def root_span(
    trace_id: bytes,
    root_id: bytes,
    attributes: dict[str, Any],
    *,
    start: int = EPOCH_NS + 10**9,
    latency_ms: int = 100,
) -> Any:
    return span(
        trace_id,
        root_id,
        "badge.run",
        start=start,
        end=start + latency_ms * 10**6,
        attributes=attributes,
    )


def send(c: Collector, key: str, spans: list[Any], agent: str = AGENT) -> None:
    reply = c.post(request(spans, agent).SerializeToString(), key=key)
    assert reply.status_code == 200, reply.text


def in_order(order: str, grader: Any, forger: Any) -> None:
    """Call the grader's and the forger's sends in the order named."""
    first, last = (grader, forger) if order == "grader-first" else (forger, grader)
    first()
    last()


def grader_of(c: Collector) -> str:
    return c.service.keys.create("owner-a", "grader")


def the_agent(name: str = AGENT) -> str:
    return agent_id("owner-a", name)


def keyed(run_key: str, name: str = AGENT) -> str:
    """The id of the run whose badge.run.id is `run_key` (docs/runs.md)."""
    return run_id_for(the_agent(name), f"run:{run_key}")


def get(c: Collector, path: str, **params: Any) -> Any:
    headers = {"authorization": f"Bearer {c.key}"}
    reply = c.http.get(f"{c.http_url}{API}{path}", params=params, headers=headers)
    assert reply.status_code == 200, reply.text
    return reply.json()


def run(c: Collector, run_id: str) -> dict[str, Any]:
    body: dict[str, Any] = get(c, f"/runs/{run_id}")
    return body


def runs_of(c: Collector, name: str = AGENT) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = get(c, "/runs", agent_id=the_agent(name), page_size=500)["items"]
    return items


def screening(c: Collector, sid: str = SID, name: str = AGENT) -> dict[str, Any]:
    body: dict[str, Any] = get(c, f"/agents/{the_agent(name)}/screenings/{sid}")
    return body


# -- item 1: the run keys of graded runs, sent again in traces of the agent's own


@pytest.mark.parametrize("order", ORDERS)
def test_an_agent_key_cannot_rewrite_a_graded_run_by_sending_its_run_key_in_another_trace(
    collector: Collector, order: str
) -> None:
    c, grader = collector, grader_of(collector)
    graded_trace, forged_trace = new_trace_id(), new_trace_id()

    def graded() -> None:
        send(
            c, grader, [root_span(graded_trace, new_span_id(), screened_attributes("t", 1, False))]
        )

    def forged() -> None:
        attributes = screened_attributes("t", 1, True)
        send(c, c.key, [root_span(forged_trace, new_span_id(), attributes, latency_ms=5)])

    in_order(order, graded, forged)
    c.settle()
    held = run(c, keyed(f"{SID}/t/1"))
    assert held["trace_id"] == graded_trace.hex()
    assert (held["success"], held["success_source"], held["latency_ms"]) == (False, "graded", 100)
    assert held["screening_id"] == SID
    # The forged trace is a run of its own: the agent's report, in no screening.
    [own] = [r for r in runs_of(c) if r["trace_id"] == forged_trace.hex()]
    assert own["id"] != held["id"]
    assert (own["success"], own["success_source"], own["screening_id"]) == (
        True,
        "reported",
        None,
    )
    # Its owner reads it as any run: its trace, and its certificate's spans.
    [forged_span] = get(c, f"/runs/{own['id']}/trace")["spans"]
    assert forged_span["classification"]["root"] is True
    [canonical] = get(c, f"/runs/{own['id']}/trace", canonical="true")
    assert canonical["span_id"] == forged_span["span_id"]
    document = screening(c)
    assert (document["total_runs"], document["successful_runs"], document["rounds"]) == (1, 0, 1)


# -- item 2: the screener's root span id, or an earlier span, from the agent


@pytest.mark.parametrize("order", ORDERS)
def test_a_span_with_the_graders_root_span_id_never_replaces_the_graders_root(
    collector: Collector, order: str
) -> None:
    c, grader = collector, grader_of(collector)
    trace_id, root_id = new_trace_id(), new_span_id()
    graded_root = root_span(trace_id, root_id, screened_attributes("t", 1, False))
    forged_root = root_span(
        trace_id, root_id, screened_attributes("t", 1, True), start=EPOCH_NS, latency_ms=5
    )
    in_order(
        order,
        lambda: send(c, grader, [graded_root]),
        lambda: send(c, c.key, [forged_root]),
    )
    c.settle()
    stored = c.query("SELECT grader, start_ns FROM spans WHERE span_id = ?", root_id.hex())
    assert [(bool(g), s) for g, s in stored] == [(True, EPOCH_NS + 10**9)]
    held = run(c, keyed(f"{SID}/t/1"))
    assert (held["success"], held["success_source"], held["latency_ms"]) == (False, "graded", 100)
    assert screening(c)["total_runs"] == 1


@pytest.mark.parametrize("order", ORDERS)
def test_an_earlier_span_of_the_agent_never_becomes_the_root_of_a_graded_run(
    collector: Collector, order: str
) -> None:
    c, grader = collector, grader_of(collector)
    trace_id, root_id, forged_id = new_trace_id(), new_span_id(), new_span_id()
    graded_root = root_span(trace_id, root_id, screened_attributes("t", 1, False))
    # The agent's real work, under the root it was handed in `traceparent`.
    chat = span(trace_id, new_span_id(), "chat m", parent=root_id, attributes=CHAT)
    # A parentless span that starts 50 s earlier and names the run's key.
    forged = root_span(
        trace_id,
        forged_id,
        screened_attributes("t", 1, True),
        start=EPOCH_NS + 10**9 - 50 * 10**9,
        latency_ms=50_000,
    )
    forged_child = span(trace_id, new_span_id(), "chat m", parent=forged_id, attributes=CHAT)
    in_order(
        order,
        lambda: send(c, grader, [graded_root]),
        lambda: send(c, c.key, [chat, forged, forged_child]),
    )
    c.settle()
    held = run(c, keyed(f"{SID}/t/1"))
    assert (held["success"], held["success_source"], held["latency_ms"]) == (False, "graded", 100)
    assert (held["llm_calls"], held["input_tokens"], held["span_count"]) == (1, 100, 2)
    assert held["screening_id"] == SID
    [aside] = [r for r in runs_of(c) if r["id"] != held["id"]]
    assert (aside["latency_ms"], aside["screening_id"], aside["success_source"]) == (
        50_000,
        None,
        "reported",
    )
    document = screening(c)
    assert (document["total_runs"], document["successful_runs"]) == (1, 0)


def test_a_parentless_span_of_the_agent_never_becomes_the_root_of_a_graders_trace_run(
    collector: Collector,
) -> None:
    """A grader's run without badge.run.id (a harness of one's own, graded by
    trace id) is held the same way: its parentless grader span is the root."""
    c, grader = collector, grader_of(collector)
    trace_id, root_id = new_trace_id(), new_span_id()
    graded_root = root_span(trace_id, root_id, {"badge.task.id": "t", "badge.run.success": False})
    forged = root_span(
        trace_id, new_span_id(), {"badge.run.success": True}, start=EPOCH_NS, latency_ms=50_000
    )
    send(c, c.key, [forged])
    send(c, grader, [graded_root])
    c.settle()
    held = run(c, run_id_for(the_agent(), f"trace:{trace_id.hex()}"))
    assert (held["success"], held["success_source"], held["latency_ms"]) == (False, "graded", 100)


# -- item 3: runs of the agent's own that name the grader's screening


def graded_screening(c: Collector, grader: str, name: str = AGENT) -> None:
    """Two tasks, one round, through the grader key: one pass, one fail."""
    for task, success in (("refund", True), ("track", False)):
        attributes = screened_attributes(task, 1, success)
        send(c, grader, [root_span(new_trace_id(), new_span_id(), attributes)], name)


def forged_rounds(c: Collector) -> None:
    """Four more rounds of passes, through the agent's key, new run keys."""
    for round_ in range(2, 6):
        for task in ("refund", "track"):
            attributes = screened_attributes(task, round_, True)
            send(c, c.key, [root_span(new_trace_id(), new_span_id(), attributes)])


@pytest.mark.parametrize("order", ORDERS)
def test_runs_of_an_agent_key_never_count_in_a_screening_a_grader_recorded(
    collector: Collector, order: str
) -> None:
    c, grader = collector, grader_of(collector)
    graded_screening(c, grader, "control-bot")  # the same screening, unforged
    in_order(order, lambda: graded_screening(c, grader), lambda: forged_rounds(c))
    c.settle()
    control, document = screening(c, name="control-bot"), screening(c)
    for field in ("total_runs", "successful_runs", "rounds", "composite_score", "pass_1"):
        assert document[field] == control[field], field
    assert (document["total_runs"], document["rounds"]) == (2, 1)
    assert [t["runs"] for t in document["tasks"]] == [1, 1]
    listed = get(c, "/runs", agent_id=the_agent(), screening=SID)["items"]
    assert len(listed) == 2
    # The forged runs are still the agent's runs, reported, in no screening.
    own = [r for r in runs_of(c) if r["success_source"] == "reported"]
    assert len(own) == 8 and {r["screening_id"] for r in own} == {None}


def test_an_agent_cannot_take_a_screening_id_before_the_grader_plans_it(
    collector: Collector,
) -> None:
    c, grader = collector, grader_of(collector)
    forged_rounds(c)
    c.settle()
    plan = {
        "agent": AGENT,
        "screening_id": SID,
        "suite_name": "support",
        "suite_digest": "d" * 64,
        "version": None,
        "rounds": 1,
        "tasks": ["refund", "track"],
    }
    made = c.http.post(
        f"{c.http_url}{API}/screenings", json=plan, headers={"authorization": f"Bearer {grader}"}
    )
    assert made.status_code == 201, made.text
    assert made.json()["stored_runs"] == 0
    graded_screening(c, grader)
    c.settle()
    document = screening(c)
    assert (document["total_runs"], document["rounds"], document["complete"]) == (2, 1, True)


# -- what keeps working


def test_a_screening_recorded_wholly_through_an_agent_key_counts_as_reported(
    collector: Collector,
) -> None:
    c = collector
    forged_rounds(c)
    c.settle()
    document = screening(c)
    assert (document["total_runs"], document["rounds"]) == (8, 5)
    runs = get(c, "/runs", agent_id=the_agent(), screening=SID)["items"]
    assert {r["success_source"] for r in runs} == {"reported"}
    assert {r["id"] for r in runs} == {
        keyed(f"{SID}/{task}/{round_}") for task in ("refund", "track") for round_ in range(2, 6)
    }


def test_an_agent_keys_own_run_keys_keep_their_ids_and_take_grades(collector: Collector) -> None:
    c, grader = collector, grader_of(collector)
    send(c, c.key, [root_span(new_trace_id(), new_span_id(), {"badge.run.id": "job-7"})])
    graded = c.http.post(
        f"{c.http_url}{API}/grades",
        json={"agent": AGENT, "run_key": "job-7", "success": False},
        headers={"authorization": f"Bearer {grader}"},
    )
    assert graded.status_code == 202, graded.text
    c.settle()
    held = run(c, keyed("job-7"))
    assert (held["success"], held["success_source"]) == (False, "graded")


# -- a process that held the agent's span of that identity


def test_a_process_that_holds_the_agents_span_recomputes_with_the_graders_in_its_place(
    tmp_path: Path, database_url: str
) -> None:
    """Two collectors on one database: the first holds the trace, with the
    agent's span under the root's identity, in its cache; the second stores
    the grader's root in its place. The span count is the same, so the first
    must tell from the count of grader spans that what it holds is stale."""
    with (
        running_collector(tmp_path / "one", database_url=database_url) as first,
        running_collector(tmp_path / "two", database_url=database_url) as second,
    ):
        grader = grader_of(second)
        trace_id, root_id = new_trace_id(), new_span_id()
        forged = root_span(trace_id, root_id, screened_attributes("t", 1, True), latency_ms=5)
        send(first, first.key, [forged])
        first.settle()
        chat = span(trace_id, new_span_id(), "chat m", parent=root_id, attributes=CHAT)
        send(first, first.key, [chat])
        first.settle()  # the first process read the trace back, and holds it
        send(second, grader, [root_span(trace_id, root_id, screened_attributes("t", 1, False))])
        second.settle()
        late = span(trace_id, new_span_id(), "chat m", parent=root_id, attributes=CHAT)
        send(first, first.key, [late])
        first.settle()
        second.settle()
        held = run(first, keyed(f"{SID}/t/1"))
        assert (held["success"], held["success_source"], held["latency_ms"]) == (
            False,
            "graded",
            100,
        )
        assert (held["llm_calls"], held["span_count"]) == (2, 3)


# -- any order, any grouping: the same runs (docs/runs.md "Delivery in any order")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32))
def test_a_graded_run_and_its_forgeries_give_the_same_runs_in_any_order(
    shared: Shared, seed: int
) -> None:
    c, rnd = shared.collector, random.Random(seed)
    sid = f"p-{seed}"
    graded_trace, forged_trace = new_trace_id(), new_trace_id()
    root_id = new_span_id()
    graded = [root_span(graded_trace, root_id, screened_attributes("t", 1, False, sid))]
    agents = [
        span(graded_trace, new_span_id(), "chat m", parent=root_id, attributes=CHAT),
        root_span(  # the root's identity, from the agent
            graded_trace, root_id, screened_attributes("t", 1, True, sid), start=EPOCH_NS
        ),
        root_span(  # an earlier parentless span naming the run key
            graded_trace,
            new_span_id(),
            screened_attributes("t", 1, True, sid),
            start=EPOCH_NS,
            latency_ms=50_000,
        ),
        root_span(forged_trace, new_span_id(), screened_attributes("t", 1, True, sid)),
        root_span(forged_trace, new_span_id(), screened_attributes("t", 2, True, sid)),
    ]
    # The reference, under another owner: the grader's root first, then the
    # agent's spans in one request.
    send(c, shared.reference_grader, graded)
    send(c, shared.reference_agent, agents)
    pieces = [(shared.grader, s) for s in graded] + [(c.key, s) for s in agents]
    pieces += rnd.sample(pieces, k=rnd.randint(0, 3))  # an exporter's retries
    rnd.shuffle(pieces)
    for key, piece in pieces:
        send(c, key, [piece])
    c.settle()
    traces = (graded_trace.hex(), forged_trace.hex())
    assert outcomes(c, "owner-a", traces) == outcomes(c, "reference-owner", traces)


COMPARED = (*RUN_OUTCOME_COLUMNS, "grader_claim", "screening_id", "screening_round")


def outcomes(c: Collector, owner: str, traces: tuple[str, str]) -> list[tuple[Any, ...]]:
    found = c.query(
        f"SELECT {', '.join(COMPARED)} FROM runs WHERE owner = ? AND trace_id IN (?, ?)",
        owner,
        *traces,
    )
    claim = COMPARED.index("grader_claim")
    return sorted(((*row[:claim], bool(row[claim]), *row[claim + 1 :]) for row in found), key=repr)


@dataclass
class Shared:
    collector: Collector
    grader: str
    reference_agent: str
    reference_grader: str


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, module_database_url: str) -> Iterator[Shared]:
    directory = Path(tmp_path_factory.mktemp("forged"))
    with running_collector(directory, database_url=module_database_url) as c:
        keys = c.service.keys
        yield Shared(
            c,
            grader_of(c),
            keys.create("reference-owner"),
            keys.create("reference-owner", "grader"),
        )
