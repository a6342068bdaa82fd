"""Run timers on the collector's clock: timeout, late root, orphan grace."""

from __future__ import annotations

from pathlib import Path

from tests.integration.harness import FakeClock, running_collector
from tests.otlp_builders import chat_awaiting_its_root, new_span_id, new_trace_id, request, span


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
        c.service.recomputer.sweep()
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
        c.service.recomputer.sweep()
        c.settle()
        assert status(c, trace_id) == [("completed", 1, "none")]


def test_a_run_whose_spans_retention_removed_is_updated_not_duplicated_by_a_late_span(
    tmp_path: Path, database_url: str
) -> None:
    """Retention removes a trace's spans and its trace row; a span of that trace
    arriving later gives the trace a new number, and the run stored under the
    old one is found by its id: one run, recomputed from the spans stored."""
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, span_retention_days=1.0
    ) as c:
        trace_id, root = new_trace_id(), new_span_id()
        first = span(trace_id, root, "badge.run", attributes={"badge.task.id": "t"})
        assert c.post(request([first]).SerializeToString()).status_code == 200
        c.settle()
        [(run_id,)] = c.query("SELECT id FROM runs WHERE trace_id = ?", trace_id.hex())
        clock.advance(2 * 86400)
        c.service.recomputer._retain(clock() - 86400)  # a pass, as the sweeper runs it
        assert c.query("SELECT count(*) FROM traces") == [(0,)]
        late = span(trace_id, new_span_id(), "tool", parent=root, attributes={"tool.name": "x"})
        assert c.post(request([late]).SerializeToString()).status_code == 200
        c.settle()
        [(again, new_ref, spans)] = c.query(
            "SELECT id, trace_ref, span_count FROM runs WHERE trace_id = ?", trace_id.hex()
        )
        assert (again, spans) == (run_id, 1)  # its root went with retention
        assert new_ref == c.query("SELECT id FROM traces")[0][0]


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
        c.service.recomputer._retain(clock() - 86400)
        newer = new_trace_id()
        second = span(newer, new_span_id(), "badge.run", attributes={"badge.task.id": "u"})
        tool = span(newer, new_span_id(), "tool", parent=second.span_id)
        assert c.post(request([second]).SerializeToString()).status_code == 200
        c.settle()
        assert c.post(request([tool]).SerializeToString()).status_code == 200  # a recomputation
        c.settle()
        kept = dict(c.query("SELECT trace_id, span_count FROM runs"))
        assert kept == {old.hex(): 1, newer.hex(): 2}
