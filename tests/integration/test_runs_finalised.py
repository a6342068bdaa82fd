"""The runs-finalised metric against the runs stored (docs/operations.md
"Metrics"): a run can stop being terminal, when a later span gives its spans
to another run or makes it running again. `badge_runs_finalised_total`
counts each time a run became terminal and `badge_runs_unfinalised_total`
each time one stopped, so the first minus the second is the terminal runs
stored. Two `make demo` runs read finalised 259 with 205 runs stored: the
screened agent's own spans often arrive before the screener's root and
finish a run of their own, which the root then takes over."""

from __future__ import annotations

import re
from pathlib import Path

from bench.support.otlp import agent_run, new_span_id, new_trace_id, request, span
from collector.assembly.membership import FLAG_HAS_IS_REMOTE, FLAG_IS_REMOTE
from tests.integration.harness import Collector, FakeClock, running_collector, wait_for


def counted(c: Collector) -> dict[str, float]:
    """Both counters, summed over their statuses."""
    text = c.http.get(f"{c.http_url}/metrics").text
    totals = {"finalised": 0.0, "unfinalised": 0.0}
    for name, value in re.findall(r"^badge_runs_(\w+)_total\{[^}]*\} (\S+)$", text, re.M):
        totals[name] += float(value)
    return totals


def terminal_runs(c: Collector) -> int:
    return int(c.query("SELECT count(*) FROM runs WHERE terminal_at IS NOT NULL")[0][0])


def test_an_agents_spans_before_the_screeners_root_count_once_net(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        assert c.post(agent_run("plain").SerializeToString()).is_success  # counted once
        trace_id, root = new_trace_id(), new_span_id()
        # the agent's own span, its parent the screener's root in another process
        # (traceparent: the flags say remote), exported first...
        agent = span(
            trace_id,
            new_span_id(),
            "invoke_agent",
            parent=root,
            flags=FLAG_HAS_IS_REMOTE | FLAG_IS_REMOTE,
            attributes={"gen_ai.operation.name": "invoke_agent"},
        )
        assert c.post(request([agent], "screened").SerializeToString()).is_success
        wait_for(lambda: terminal_runs(c) == 2)  # a run of its own, completed
        # ...then the screener's root, whose badge.run.id claims it
        screener = span(
            trace_id,
            root,
            "badge.run",
            attributes={"badge.run.id": "s1/t1/1", "badge.task.id": "t1"},
        )
        assert c.post(request([screener], "screened").SerializeToString()).is_success
        wait_for(lambda: c.query("SELECT run_key FROM runs WHERE trace_id = ?", trace_id.hex())
                 == [("run:s1/t1/1",)])  # fmt: skip
        assert terminal_runs(c) == 2
        seen = wait_for(lambda: (n := counted(c))["unfinalised"] == 1 and n)
        assert seen == {"finalised": 3.0, "unfinalised": 1.0}  # before: finalised 3, nothing else
        assert seen["finalised"] - seen["unfinalised"] == terminal_runs(c)


def test_a_run_made_running_again_by_a_late_span_counts_once_net(
    tmp_path: Path, database_url: str
) -> None:
    """An orphan becomes the root after the grace; its parent arrives, saying
    its own parent is still to come (running again); then the real root."""
    clock = FakeClock()
    with running_collector(
        tmp_path, database_url=database_url, clock=clock, orphan_grace_s=30
    ) as c:
        trace_id, top, middle = new_trace_id(), new_span_id(), new_span_id()
        orphan = span(
            trace_id, new_span_id(), "step", parent=middle, attributes={"badge.task.id": "t"}
        )
        assert c.post(request([orphan]).SerializeToString()).is_success
        c.settle()
        clock.advance(31)
        c.service.maintenance.sweep()
        c.settle()
        assert terminal_runs(c) == 1
        waiting = span(trace_id, middle, "handler", parent=top, flags=FLAG_HAS_IS_REMOTE)
        assert c.post(request([waiting]).SerializeToString()).is_success
        c.settle()
        assert c.query("SELECT status FROM runs") == [("running",)]
        assert c.post(request([span(trace_id, top, "root")]).SerializeToString()).is_success
        c.settle()
        assert c.query("SELECT status FROM runs") == [("completed",)]
        assert counted(c) == {"finalised": 2.0, "unfinalised": 1.0}
        assert terminal_runs(c) == 1
