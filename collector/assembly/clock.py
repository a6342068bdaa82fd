"""Span times no clock could have given (docs/runs.md "Impossible times").

A host whose clock is wrong, or an SDK that leaves a start time at 0, sends
spans dated 1970 or 2262. Taken as they are, one such root gives a run a
latency of 9.2e12 ms, which drags its agent's average and score down for as
long as the run counts, and a run dated in 2262 stays first in every
newest-first list. So a span time is *impossible* when it is before
2000-01-01 or more than a day after the collector received the span; a run
whose time-giving spans have impossible times takes its times from the
collector's clock instead and has no latency; a run longer than the
`max_run_latency` setting keeps its times and has no latency either. The
spans themselves are stored as sent; the trace view shows which times were
set aside and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from collector.assembly.facts import SpanFacts

CLOCK_FLOOR_NS = 946_684_800 * 10**9  # 2000-01-01T00:00:00Z
CLOCK_AHEAD_NS = 86_400 * 10**9  # a day after the collector received the span


class RunTimes(NamedTuple):
    """A run's start and end (ns) and latency (ms; None when not a real one)."""

    start_ns: int
    end_ns: int
    latency_ms: float | None


def clock_problem(span: SpanFacts) -> str:
    """Why a span's times cannot be true, or "" when they can."""
    latest = int(span.received_at * 1e9) + CLOCK_AHEAD_NS
    if CLOCK_FLOOR_NS <= span.start_ns <= latest and CLOCK_FLOOR_NS <= span.end_ns <= latest:
        return ""  # nearly every span: no tuple built, no loop (bench/assembly.py)
    for what, at in (("starts", span.start_ns), ("ends", span.end_ns)):
        if at < CLOCK_FLOOR_NS:
            return f"{what} before 2000-01-01: times taken from the collector's clock"
        if at > latest:
            return (
                f"{what} more than a day after the collector received it: "
                "times taken from the collector's clock"
            )
    return ""


def run_times(
    root: SpanFacts | None, members: Sequence[SpanFacts], max_latency_s: float
) -> RunTimes:
    """The root's times; without a root, the span times that can be true."""
    if root is not None:
        if clock_problem(root):
            return _received(root, root)
        return _measured(root.start_ns, root.end_ns, max_latency_s)
    possible = [s for s in members if not clock_problem(s)]
    if not possible:
        first = min(members, key=lambda s: s.received_at)
        last = max(members, key=lambda s: s.received_at)
        return _received(first, last)
    start = min(s.start_ns for s in possible)
    end = max(s.end_ns for s in possible)
    return _measured(start, end, max_latency_s)


def _measured(start_ns: int, end_ns: int, max_latency_s: float) -> RunTimes:
    latency = (end_ns - start_ns) / 1e6
    return RunTimes(start_ns, end_ns, latency if latency <= max_latency_s * 1e3 else None)


def _received(first: SpanFacts, last: SpanFacts) -> RunTimes:
    """When the collector saw the run: the only clock left to trust."""
    return RunTimes(int(first.received_at * 1e9), int(last.received_at * 1e9), None)
