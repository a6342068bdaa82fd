"""What an agent's spans say it spent, end to end (docs/runs.md "The fields of
a run"): negative costs and counts are no figures (issue 37 item 12), and the
largest figures a span may carry are kept without breaking a sum (item 13).
Both databases: PostgreSQL refuses a sum that overflows, SQLite makes it inf."""

from __future__ import annotations

import math
from typing import Any

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector

API = "/api/v1"
MAX_COUNT = 2**63 - 1


def run_with(
    root_attrs: dict[str, Any], calls: list[dict[str, Any]], service: str
) -> tuple[bytes, Any]:
    """A root with `root_attrs` and one chat span per entry of `calls`."""
    trace, root = new_trace_id(), new_span_id()
    spans = [
        span(
            trace,
            root,
            "badge.run",
            attributes={"badge.task.id": "t1", "badge.run.success": True, **root_attrs},
            start=EPOCH_NS + 1_000_000_000,
            end=EPOCH_NS + 1_500_000_000,
        )
    ]
    for attrs in calls:
        chat = {"gen_ai.operation.name": "chat", **attrs}
        spans.append(span(trace, new_span_id(), "chat m", parent=root, attributes=chat))
    return trace, request(spans, service)


def send(c: Collector, message: Any) -> None:
    reply = c.post(message.SerializeToString())
    assert reply.status_code == 200, reply.text
    assert "rejected" not in reply.text


def get(c: Collector, path: str) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}", headers={"authorization": f"Bearer {c.key}"})
    assert reply.status_code == 200, (path, reply.text[:300])
    return reply.json()


def run_of(c: Collector, trace: bytes) -> Any:
    [(run_id,)] = c.query("SELECT id FROM runs WHERE trace_id = ?", trace.hex())
    return get(c, f"/runs/{run_id}")


def agent_id(c: Collector, name: str) -> str:
    return next(a["id"] for a in get(c, "/agents?page_size=100")["items"] if a["name"] == name)


def flattened(nodes: list[Any]) -> list[Any]:
    found: list[Any] = []
    for node in nodes:
        found += [node, *flattened(node["children"])]
    return found


def test_negative_costs_and_counts_are_ignored_and_the_trace_view_says_so(
    collector: Collector,
) -> None:
    c = collector
    trace, message = run_with(
        {"badge.cost.usd": -1e9},
        [
            {
                "gen_ai.usage.cost": -5e11,
                "gen_ai.usage.input_tokens": -9 * 10**18,
                "gen_ai.usage.output_tokens": "-12",
            }
        ],
        "negative-bot",
    )
    send(c, message)
    c.settle()
    run = run_of(c, trace)
    assert (run["input_tokens"], run["output_tokens"]) == (None, None)
    assert (run["cost_usd"], run["cost_source"]) == (None, None)  # unknown, not a refund
    spans = {s["name"]: s for s in flattened(get(c, f"/runs/{run['id']}/trace")["spans"])}
    assert spans["badge.run"]["classification"]["ignored"] == {"badge.cost.usd": "negative"}
    assert spans["chat m"]["classification"]["ignored"] == {
        "gen_ai.usage.cost": "negative",
        "gen_ai.usage.input_tokens": "negative",
        "gen_ai.usage.output_tokens": "negative",
    }
    assert spans["chat m"]["attributes"]["gen_ai.usage.cost"] == -5e11  # stored as sent


def test_a_negative_cost_cannot_cancel_what_the_agents_other_runs_spent(
    collector: Collector,
) -> None:
    """One run reporting -1e9 made the average cost negative: cost_score 1.0."""
    c = collector
    send(c, run_with({"badge.cost.usd": 1.0}, [], "spender")[1])
    send(c, run_with({"badge.cost.usd": -1e9}, [], "spender")[1])
    c.settle()
    stats = get(c, f"/agents/{agent_id(c, 'spender')}/stats")
    assert stats["completed_runs"] == 2
    assert stats["avg_cost_usd"] == 0.5  # the ignored cost is unknown, which counts as 0
    assert stats["cost_score"] < 0.5


def test_the_largest_costs_and_counts_are_kept_and_their_sums_stay_finite(
    collector: Collector,
) -> None:
    """A finite cost >= 0 is a cost (SCREEN.md section 3): 1e308 was dropped as
    absent; it counts at the ceiling, $10^12, and so does any sum above it."""
    c = collector
    root_cost, message = run_with({"badge.cost.usd": 1e308}, [], "whale")
    send(c, message)
    big = {
        "gen_ai.usage.cost": 1e308,
        "gen_ai.usage.input_tokens": MAX_COUNT,
        "gen_ai.usage.output_tokens": MAX_COUNT,
    }
    summed, message = run_with({}, [big] * 40, "whale")
    send(c, message)
    priced, message = run_with(
        {}, [{"gen_ai.usage.input_tokens": MAX_COUNT, "gen_ai.usage.output_tokens": 1}], "whale"
    )
    send(c, message)
    c.settle()
    first = run_of(c, root_cost)
    assert (first["cost_usd"], first["cost_source"]) == (1e12, "reported")
    second = run_of(c, summed)
    assert (second["cost_usd"], second["cost_source"]) == (1e12, "reported")
    assert (second["input_tokens"], second["output_tokens"]) == (MAX_COUNT, MAX_COUNT)
    third = run_of(c, priced)  # 2^63-1 tokens at $5 a million: $4.6e13, at the ceiling
    assert (third["cost_usd"], third["cost_source"]) == (1e12, "estimated")
    ident = agent_id(c, "whale")
    stats = get(c, f"/agents/{ident}/stats")
    assert stats["avg_cost_usd"] == 1e12 and stats["cost_score"] == 0.0
    fitness = get(c, f"/agents/{ident}/fitness")
    assert fitness["cost"] == 0.0
    assert all(math.isfinite(v) for v in (stats["avg_cost_usd"], fitness["cost_p50_usd"]))
