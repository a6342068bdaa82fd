"""Run timers on the collector's clock: timeout, late root, orphan grace."""

from __future__ import annotations

from pathlib import Path

from bench.support.otlp import chat_awaiting_its_root, new_span_id, new_trace_id, request, span
from tests.integration.harness import FakeClock, running_collector

AGENT_SPAN = {"gen_ai.operation.name": "invoke_agent"}
TOOL_SPAN = {"gen_ai.operation.name": "execute_tool"}


def status(c: object, trace_id: bytes) -> list[tuple[str, object, str]]:
    rows = c.query(  # type: ignore[attr-defined]
        "SELECT status, success, error_class FROM runs WHERE trace_id = ?", trace_id.hex()
    )
    return list(rows)


def test_rootless_run_times_out_and_a_late_root_completes_it(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, run_timeout_s=300, orphan_grace_s=30
    ) as c:
        trace_id, root = new_trace_id(), new_span_id()
        child = chat_awaiting_its_root(trace_id, root)
        assert c.post(request([child]).SerializeToString()).status_code == 200
        c.settle()
        assert status(c, trace_id) == [("running", None, "none")]
        clock.advance(301)
        c.service.maintenance.sweep()
        c.settle()
        assert status(c, trace_id) == [("timeout", 0, "timeout")]
        late = span(trace_id, root, "badge.run", attributes={"badge.run.success": True})
        assert c.post(request([late]).SerializeToString()).status_code == 200
        c.settle()
        assert status(c, trace_id) == [("completed", 1, "none")]


def test_orphan_with_unknown_flags_becomes_root_after_grace(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, orphan_grace_s=30
    ) as c:
        trace_id = new_trace_id()
        orphan = span(
            trace_id,
            new_span_id(),
            "handler",
            parent=new_span_id(),
            attributes={"badge.task.id": "t"},
        )
        c.post(request([orphan]).SerializeToString())
        c.settle()
        assert status(c, trace_id)[0][0] == "running"
        clock.advance(31)
        c.service.maintenance.sweep()
        c.settle()
        assert status(c, trace_id) == [("completed", 1, "none")]


RUN_FIELDS = (
    "id, task_id, status, success, span_count, steps, llm_calls, cost_usd, latency_ms, "
    "error_class, terminal_at"
)


def test_a_run_whose_spans_retention_removed_keeps_its_summary_whatever_arrives_later(
    tmp_path: Path, database_url: str
) -> None:
    """Retention removes a finished run's spans and keeps the run. A late
    child, a late second root, or the same spans sent again cannot rewrite or
    zero it; a late span of another agent adds a run of its own; /stats is the
    same before retention, after it and after the late spans."""
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, span_retention_days=1.0
    ) as c:
        trace_id, root, agent = new_trace_id(), new_span_id(), new_span_id()
        root_attrs = {"badge.task.id": "refund", "badge.run.success": False, "badge.cost.usd": 0.5}
        spans = [span(trace_id, root, "badge.run", attributes=root_attrs)]
        spans.append(span(trace_id, agent, "invoke_agent", parent=root, attributes=AGENT_SPAN))
        spans += [
            span(trace_id, new_span_id(), f"execute_tool t{i}", parent=agent, attributes=TOOL_SPAN)
            for i in range(3)
        ]
        assert c.post(request(spans).SerializeToString()).status_code == 200
        c.settle()
        before = c.query(f"SELECT {RUN_FIELDS} FROM runs WHERE trace_id = ?", trace_id.hex())
        assert [row[1:8] for row in before] == [("refund", "completed", 0, 5, 3, 0, 0.5)]
        [ident] = c.query("SELECT id FROM agents")
        stats = c.http.get(f"{c.http_url}/api/v1/agents/{ident[0]}/stats").json()
        clock.advance(2 * 86400)
        c.service.maintenance.retain(clock() - 86400)  # a pass, as the sweeper runs it
        assert c.query("SELECT count(*) FROM spans") == [(0,)]
        late_child = span(
            trace_id, new_span_id(), "execute_tool x", parent=root, attributes=TOOL_SPAN
        )
        late_root = span(
            trace_id, new_span_id(), "badge.run", attributes={"badge.run.success": True}
        )
        for late in ([late_child], [late_root], spans):
            assert c.post(request(late).SerializeToString()).status_code == 200
            c.settle()
            after = c.query(f"SELECT {RUN_FIELDS} FROM runs WHERE trace_id = ?", trace_id.hex())
            assert after == before
        other = span(trace_id, new_span_id(), "badge.run", attributes={"badge.task.id": "x"})
        assert c.post(request([other], service="agent-b").SerializeToString()).status_code == 200
        c.settle()
        agents = c.query("SELECT agent_id, span_count FROM runs WHERE trace_id = ?", trace_id.hex())
        assert len(agents) == 2  # the other agent's run is added beside the sealed one
        c.service.maintenance.sweep()  # the kept totals folded
        assert c.http.get(f"{c.http_url}/api/v1/agents/{ident[0]}/stats").json() == stats


def test_a_trace_number_given_again_never_takes_another_traces_runs(
    tmp_path: Path, database_url: str
) -> None:
    """Before migration 0012 SQLite numbered a trace max + 1, so once retention
    removed the newest trace row the next new trace got its number, which a
    kept run still carries; numbers are never given again now (AUTOINCREMENT),
    and runs of a reused number (in databases from before) are checked too."""
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, span_retention_days=1.0
    ) as c:
        old = new_trace_id()
        first = span(old, new_span_id(), "badge.run", attributes={"badge.task.id": "t"})
        assert c.post(request([first]).SerializeToString()).status_code == 200
        c.settle()
        clock.advance(2 * 86400)
        c.service.maintenance.retain(clock() - 86400)
        newer = new_trace_id()
        second = span(newer, new_span_id(), "badge.run", attributes={"badge.task.id": "u"})
        tool = span(newer, new_span_id(), "tool", parent=second.span_id)
        assert c.post(request([second]).SerializeToString()).status_code == 200
        c.settle()
        assert c.post(request([tool]).SerializeToString()).status_code == 200  # a recomputation
        c.settle()
        kept = dict(c.query("SELECT trace_id, span_count FROM runs"))
        assert kept == {old.hex(): 1, newer.hex(): 2}
