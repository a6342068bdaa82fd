"""Run timers on the collector's clock: timeout, late root, orphan grace."""

from __future__ import annotations

from pathlib import Path

from collector.assembly.membership import FLAG_HAS_IS_REMOTE
from tests.integration.harness import FakeClock, running_collector
from tests.otlp_builders import new_span_id, new_trace_id, request, span


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
        child = span(
            trace_id,
            new_span_id(),
            "chat",
            parent=root,
            flags=FLAG_HAS_IS_REMOTE,
            attributes={"gen_ai.operation.name": "chat"},
        )
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
