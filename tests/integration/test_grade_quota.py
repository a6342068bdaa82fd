"""Grades waiting for their run are bounded (docs/loop.md "Graded outcomes"):
per owner in bytes (BADGE_GRADE_QUOTA_BYTES, past it 429) and in time
(BADGE_GRADE_WAIT_DAYS, aged out by the retention pass). Grades of stored
runs are never refused and never aged out. Real collector, both databases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.support.otlp import agent_run, new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, FakeClock, running_collector
from tests.integration.test_grades import grader_key, post_grade

AGENT = "graded-agent"
QUOTA = 10_000
ROW_BYTES = 256  # storage.grades.ROW_BYTES


def waiting_body(run_key: str, output_bytes: int = 2000) -> dict[str, Any]:
    return {"agent": AGENT, "run_key": run_key, "success": False, "output": "x" * output_bytes}


def size_of(body: dict[str, Any]) -> int:
    """What one row of this grade counts while it waits."""
    return ROW_BYTES + len(body["agent"]) + len(body["run_key"]) + len(body.get("output", ""))


def usage(c: Collector, owner: str = "owner-a") -> int:
    """The owner's kept sum, checked against the rows it sums."""
    kept = c.query("SELECT waiting_bytes FROM grade_usage WHERE owner = ?", owner)
    [(summed,)] = c.query(
        "SELECT coalesce(sum(waiting_bytes), 0) FROM grades WHERE owner = ?", owner
    )
    assert (kept[0][0] if kept else 0) == summed
    return int(summed)


def send_keyed_run(c: Collector, run_key: str) -> str:
    """A one-span run whose badge.run.id is `run_key`; returns its trace id."""
    trace_id = new_trace_id()
    root = span(trace_id, new_span_id(), "run", attributes={"badge.run.id": run_key})
    assert c.post(request([root], AGENT).SerializeToString()).status_code == 200
    c.settle()
    return trace_id.hex()


def send_trace_run(c: Collector) -> str:
    """An agent run without badge.run.id (its run key is its trace id)."""
    message = agent_run("t1", service=AGENT, success=True)
    assert c.post(message.SerializeToString()).status_code == 200
    c.settle()
    return message.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()


def source_of(c: Collector, trace_id: str) -> tuple[Any, ...]:
    [row] = c.query("SELECT success, success_source FROM runs WHERE trace_id = ?", trace_id)
    return (bool(row[0]), row[1])


def test_a_grader_filling_its_quota_is_refused_and_no_one_else_is(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url, grade_quota_bytes=QUOTA) as c:
        key = grader_key(c)
        bodies = [waiting_body(f"case-{i}") for i in range(4)]
        for body in bodies:
            reply = post_grade(c, key, body)
            assert reply.status_code == 202 and reply.json()["run_ids"] == [], reply.text
        full = sum(size_of(body) for body in bodies)
        assert usage(c) == full <= QUOTA
        refused = post_grade(c, key, waiting_body("case-4"))
        assert refused.status_code == 429, refused.text
        assert refused.headers["retry-after"] == "60"
        assert f"{full} of {QUOTA} bytes" in refused.json()["detail"]
        assert c.query("SELECT count(*) FROM grades") == [(4,)] and usage(c) == full
        # replacing a waiting grade counts the difference only
        assert post_grade(c, key, waiting_body("case-0", 2000)).status_code == 202
        assert post_grade(c, key, waiting_body("case-0", 3000)).status_code == 429
        assert post_grade(c, key, waiting_body("case-0", 10)).status_code == 202
        assert usage(c) == full - 1990
        # another owner's grader is not affected
        other = grader_key(c, "owner-b")
        assert post_grade(c, other, waiting_body("case-4")).status_code == 202
        assert usage(c, "owner-b") == size_of(waiting_body("case-4"))


def test_grades_for_stored_runs_are_taken_past_the_quota(tmp_path: Path, database_url: str) -> None:
    with running_collector(tmp_path, database_url=database_url, grade_quota_bytes=QUOTA) as c:
        key = grader_key(c)
        for i in range(4):
            assert post_grade(c, key, waiting_body(f"case-{i}")).status_code == 202
        assert post_grade(c, key, waiting_body("case-4")).status_code == 429
        before = usage(c)
        by_trace = send_trace_run(c)  # its key reads as a trace id: two names
        by_key = send_keyed_run(c, "stored-case")
        for run_key, trace_id in ((by_trace, by_trace), ("stored-case", by_key)):
            reply = post_grade(c, key, waiting_body(run_key, 60_000))
            assert reply.status_code == 202 and len(reply.json()["run_ids"]) == 1, reply.text
            assert source_of(c, trace_id) == (False, "graded")
            # it met its run: no row waits for the key's other name
            assert c.query("SELECT count(*) FROM grades WHERE run_key = ?", run_key) == [(1,)]
        assert usage(c) == before


def test_a_waiting_grade_that_meets_its_run_frees_its_bytes(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url, grade_quota_bytes=QUOTA) as c:
        key = grader_key(c)
        trace = new_trace_id()  # a run key that is also a trace id waits under both names
        by_trace = waiting_body(trace.hex())
        by_key = waiting_body("case-9")
        for body in (by_trace, by_key):
            assert post_grade(c, key, body).status_code == 202
        assert usage(c) == 2 * size_of(by_trace) + size_of(by_key)
        assert post_grade(c, key, waiting_body("case-1")).status_code == 202
        assert post_grade(c, key, waiting_body("case-2")).status_code == 429

        keyed_trace = send_keyed_run(c, "case-9")
        assert source_of(c, keyed_trace) == (False, "graded")
        assert usage(c) == 2 * size_of(by_trace) + size_of(waiting_body("case-1"))

        message = agent_run("t1", service=AGENT, success=True)
        for s in message.resource_spans[0].scope_spans[0].spans:
            s.trace_id = trace
        assert c.post(message.SerializeToString()).status_code == 200
        c.settle()
        assert source_of(c, trace.hex()) == (False, "graded")
        assert usage(c) == size_of(waiting_body("case-1"))  # both names of that grade freed
        assert c.query("SELECT count(*) FROM grades WHERE run_key = ?", trace.hex()) == [(1,)]
        assert post_grade(c, key, waiting_body("case-2")).status_code == 202


def test_waiting_grades_age_out_and_grades_of_stored_runs_stay(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, grade_wait_days=1.0
    ) as c:
        key = grader_key(c)
        stored = send_trace_run(c)
        assert post_grade(c, key, waiting_body(stored)).status_code == 202
        assert post_grade(c, key, waiting_body("never-came")).status_code == 202
        assert post_grade(c, key, waiting_body("came-late")).status_code == 202
        clock.advance(2 * 86400)
        fresh = waiting_body("fresh")
        assert post_grade(c, key, fresh).status_code == 202
        c.service.maintenance.retain(clock() - 30 * 86400)  # a pass, as the sweeper runs it
        kept = sorted(key for (key,) in c.query("SELECT run_key FROM grades"))
        assert kept == sorted([stored, "fresh"])
        assert source_of(c, stored) == (False, "graded")
        assert usage(c) == size_of(fresh)
        late = send_keyed_run(c, "came-late")  # its grade was aged out: the run is its own
        assert source_of(c, late) == (True, "status")  # from its span, not a grade
