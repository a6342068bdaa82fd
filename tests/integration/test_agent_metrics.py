"""The agent gauges of /metrics end to end (docs/operations.md "Fitness in
Grafana"): runs in through the door, the board caught up, a real scrape over
HTTP parsed as Prometheus parses it, its values equal to the read API's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event

from bench.support.otlp import EPOCH_NS, agent_run, new_span_id, new_trace_id, request, span
from collector.agent_metrics import MAX_LABEL_CHARS
from collector.assembly.membership import FLAG_HAS_IS_REMOTE
from scoring import policy
from tests.integration.harness import Collector, FakeClock, running_collector

DAY = 86_400.0
API = "/api/v1"
Sample = dict[str, float]  # agent name -> value


def at(message: ExportTraceServiceRequest, ago_s: float) -> ExportTraceServiceRequest:
    """The run moved `ago_s` seconds before the builders' date: the board's
    last_run_at is its root's start."""
    for resource in message.resource_spans:
        for scope in resource.scope_spans:
            for one in scope.spans:
                one.start_time_unix_nano -= int(ago_s * 1e9)
                one.end_time_unix_nano -= int(ago_s * 1e9)
    return message


def running_run(service: str) -> ExportTraceServiceRequest:
    """An agent span whose local parent, the root, has not come: a run that
    stays running, so its agent has no completed run."""
    agent = span(
        new_trace_id(),
        new_span_id(),
        "invoke_agent a",
        parent=new_span_id(),
        flags=FLAG_HAS_IS_REMOTE,
        attributes={"gen_ai.operation.name": "invoke_agent", "badge.task.id": "t1"},
    )
    return request([agent], service)


def send(c: Collector, message: ExportTraceServiceRequest) -> str:
    """Export one run; its run key (the trace id)."""
    reply = c.post(message.SerializeToString())
    assert reply.status_code == 200, reply.text
    return message.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()


def scrape(c: Collector) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """/metrics as Prometheus reads it: sample name -> labels -> value."""
    reply = c.http.get(f"{c.http_url}/metrics")
    assert reply.status_code == 200, reply.text
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(reply.text):
        for s in family.samples:
            samples.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return samples


def by_agent(samples: dict[str, Any], name: str, **match: str) -> Sample:
    """One gauge's values by agent name, checking each sample's labels."""
    found: Sample = {}
    for labels, value in samples.get(name, {}).items():
        label = dict(labels)
        if all(label.get(k) == v for k, v in match.items()):
            assert set(label) == {"owner", "agent", "agent_id", *match}
            found[label["agent"]] = value
    return found


def get(c: Collector, path: str) -> Any:
    reply = c.http.get(f"{c.http_url}{API}{path}")
    assert reply.status_code == 200, reply.text
    return reply.json()


def agents_of(c: Collector) -> dict[str, str]:
    """Agent name -> id, from the leaderboard."""
    return {a["name"]: a["id"] for a in get(c, "/agents?page_size=100")["items"]}


def test_every_gauge_equals_stats_and_fitness(tmp_path: Path, database_url: str) -> None:
    clock = FakeClock(EPOCH_NS / 1e9 + DAY)  # the builders' runs are a day old
    with running_collector(tmp_path, clock, database_url=database_url) as c:
        keys = []
        for i in range(6):  # every axis has evidence: latency needs 5 runs
            run = agent_run(f"t{i % 2}", service="alpha", cost=0.002 * (i + 1), success=i != 3)
            keys.append(send(c, at(run, 60.0 * i)))
        for i in range(2):  # too few runs for latency: that axis is absent, not NaN
            send(c, agent_run("t1", service="beta", latency_ns=900_000_000 + i))
        send(c, running_run('quote" back\\slash'))  # escaped in labels; no share, no score
        grader = c.service.keys.create("owner-a", "grader")
        graded = c.http.post(
            f"{c.http_url}{API}/grades",
            json={"agent": "alpha", "run_key": keys[0], "success": False},
            headers={"authorization": f"Bearer {grader}"},
        )
        assert graded.status_code == 202, graded.text
        c.settle()
        samples = scrape(c)
        ids = agents_of(c)
        assert set(ids) == {"alpha", "beta", 'quote" back\\slash'}
        composite = by_agent(samples, "badge_agent_composite_score")
        verified = by_agent(samples, "badge_agent_verified_ratio")
        runs = by_agent(samples, "badge_agent_runs")
        completed = by_agent(samples, "badge_agent_completed_runs")
        graded_runs = by_agent(samples, "badge_agent_graded_runs")
        nulls = present = 0
        for name, ident in ids.items():
            stats = get(c, f"/agents/{ident}/stats")
            fitness = get(c, f"/agents/{ident}/fitness")
            assert composite.get(name) == stats["composite_score"]
            assert composite.get(name) == fitness["canonical_composite_score"]
            assert runs[name] == stats["total_runs"]
            assert completed[name] == stats["completed_runs"]
            assert graded_runs[name] == stats["graded_runs"]
            done = stats["completed_runs"]
            assert verified.get(name) == (stats["graded_runs"] / done if done else None)
            for axis in policy.RADAR_AXES:
                value = by_agent(samples, "badge_agent_radar_score", axis=axis).get(name)
                assert value == fitness[axis], (name, axis)
                nulls, present = nulls + (value is None), present + (value is not None)
            labels = next(k for k in samples["badge_agent_runs"] if ("agent", name) in k)
            assert dict(labels) == {"owner": "owner-a", "agent": name, "agent_id": ident}
        assert nulls and present  # both cases were exercised
        assert verified["alpha"] == 1 / 6  # one of six completed runs graded
        assert 'quote" back\\slash' not in verified  # no completed run: no share
        assert 'quote" back\\slash' not in composite
        assert samples["badge_agent_metrics_truncated"] == {(): 0.0}
        assert samples["badge_spans_accepted_total"]  # the collector's own metrics stay


def test_the_bound_keeps_the_agents_that_ran_last(tmp_path: Path, database_url: str) -> None:
    clock = FakeClock(EPOCH_NS / 1e9 + DAY)
    fresh = {"metrics_max_agents": 2, "metrics_refresh_s": 0}  # every scrape renders anew
    with running_collector(tmp_path, clock, database_url=database_url, **fresh) as c:
        for name, hours_ago in (("oldest", 3), ("middle", 2), ("newest", 1)):
            send(c, at(agent_run(service=name), hours_ago * 3600.0))
        c.settle()
        samples = scrape(c)
        assert set(by_agent(samples, "badge_agent_runs")) == {"newest", "middle"}
        assert samples["badge_agent_metrics_truncated"] == {(): 1.0}
        send(c, agent_run(service="oldest"))  # it runs again: now the most recent
        c.settle()
        assert set(by_agent(scrape(c), "badge_agent_runs")) == {"oldest", "newest"}


def test_the_window_follows_the_clock_and_deleted_agents_leave(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock(EPOCH_NS / 1e9 + DAY)
    with running_collector(tmp_path, clock, database_url=database_url, metrics_refresh_s=0) as c:
        send(c, at(agent_run(service="dormant"), 40 * DAY))  # 41 days before the clock
        send(c, agent_run(service="active"))
        send(c, agent_run(service="deleted"))
        c.settle()
        assert set(agents_of(c)) == {"dormant", "active", "deleted"}  # all on the board
        reply = c.http.delete(
            f"{c.http_url}{API}/agents/{agents_of(c)['deleted']}",
            headers={"authorization": f"Bearer {c.key}"},
        )
        assert reply.status_code == 204, reply.text
        last_run = by_agent(scrape(c), "badge_agent_last_run_timestamp_seconds")
        assert last_run == {"active": EPOCH_NS / 1e9 + 1}  # the root's start
        clock.advance(29 * DAY)  # the last run is 30 days old: still in
        assert set(by_agent(scrape(c), "badge_agent_runs")) == {"active"}
        clock.advance(2.0)
        assert by_agent(scrape(c), "badge_agent_runs") == {}


def test_long_names_are_cut_in_labels_and_a_scrape_stays_small(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 37 item 8: names at the 16 KiB value limit made 115 MB per
    scrape of 1,000 agents; a label is cut at 128 characters, `...` included."""
    clock = FakeClock(EPOCH_NS / 1e9 + DAY)
    # 500 characters: the longest name PostgreSQL stores (agents.name); SQLite
    # took 16 KiB, the value limit.
    long = "n" * 496
    with running_collector(tmp_path, clock, database_url=database_url) as c:
        for i in range(20):  # alike until their last characters: cut alike
            send(c, agent_run(service=f"{long}{i:04d}"))
        c.settle()
        reply = c.http.get(f"{c.http_url}/metrics")
        assert reply.status_code == 200
        samples = scrape(c)
        runs = samples["badge_agent_runs"]
        assert len(runs) == 20  # one series each: agent_id tells them apart
        for labels in runs:
            agent = dict(labels)["agent"]
            assert agent == "n" * (MAX_LABEL_CHARS - 3) + "..."
        assert len({dict(labels)["agent_id"] for labels in runs}) == 20
        assert len(reply.content) < 20 * 11 * 400 + 20_000  # was 20 x 11 x 2 x 500 bytes


def test_scrapes_within_the_refresh_interval_share_one_rendering(
    tmp_path: Path, database_url: str
) -> None:
    """Keyless scrapers each rendering the gauges took the server to 2.7 GB:
    within BADGE_METRICS_REFRESH_S, one board query serves every scrape."""
    clock = FakeClock(EPOCH_NS / 1e9 + DAY)
    with running_collector(tmp_path, clock, database_url=database_url, metrics_refresh_s=600) as c:
        send(c, agent_run(service="first"))
        c.settle()
        reads: list[str] = []

        def count(*args: Any) -> None:
            if "ORDER BY agent_board.last_run_at DESC" in str(args[2]):  # the gauges
                reads.append(str(args[2]))

        event.listen(c.service.db.reader, "before_cursor_execute", count)
        try:
            texts = list(ThreadPoolExecutor(8).map(lambda _: _metrics(c), range(24)))
            send(c, agent_run(service="second"))  # on the board, not yet in the gauges
            c.settle()
            texts.append(_metrics(c))
        finally:
            event.remove(c.service.db.reader, "before_cursor_execute", count)
        assert len(reads) == 1
        assert {_agents(text) for text in texts} == {("first",)}


def _metrics(c: Collector) -> str:
    reply = c.http.get(f"{c.http_url}/metrics")
    assert reply.status_code == 200
    return reply.text


def _agents(text: str) -> tuple[str, ...]:
    found = set()
    for family in text_string_to_metric_families(text):
        if family.name == "badge_agent_runs":
            found |= {s.labels["agent"] for s in family.samples}
    return tuple(sorted(found))
