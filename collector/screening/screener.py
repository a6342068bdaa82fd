"""The screening loop (SCREEN.md sections 3 and 4): rounds in order, `concurrency` at once.

Each dispatch is one trace: the root span starts just before the request,
the target answers (or is classed timeout, connection_error, ...), the
answer is graded and the root ends at the answer's last byte. A round
starts when every dispatch of the previous one has ended, so round k of a
task never overlaps round k+1 (pass^k reads them as independent trials);
within a round the tasks start in suite order. Targets return error
classes as values; the safety net here only catches a bug of our own, so
that it too becomes a recorded run rather than a lost screening.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from opentelemetry.trace import Span

from collector.screening.answers import Answer, failed
from collector.screening.plan import Dispatch, Screening, round_dispatches
from collector.screening.recorder import Recorder
from scoring.graders import grade

log = logging.getLogger(__name__)


class Target(Protocol):
    """Where tasks go: an HTTP endpoint or a Python callable."""

    async def dispatch(self, dispatch: Dispatch, root: Span) -> Answer: ...

    async def close(self) -> None: ...


class Progress(Protocol):
    """Told of every finished dispatch and every finished round (the command's stderr)."""

    def finished(self, outcome: Outcome) -> None: ...

    def round_ended(self, round_number: int, outcomes: Sequence[Outcome]) -> None: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """One dispatch as the screener saw it; `trace_id` (hex) finds its run in the collector."""

    task_id: str
    round: int
    error_class: str
    passed: bool
    score: float
    latency_ms: float
    trace_id: str


async def screen(
    screening: Screening,
    target: Target,
    url: str | None,
    recorder: Recorder,
    concurrency: int,
    progress: Progress,
) -> list[Outcome]:
    """Every round of the suite through `target`; the outcomes in the order they ended."""
    outcomes: list[Outcome] = []
    workers = max(1, min(concurrency, len(screening.suite.tasks)))
    for round_number in range(1, screening.rounds + 1):
        pending = round_dispatches(screening, round_number)
        ended: list[Outcome] = []
        await asyncio.gather(
            *(_work(pending, target, url, recorder, ended, progress) for _ in range(workers))
        )
        progress.round_ended(round_number, ended)
        outcomes.extend(ended)
    return outcomes


async def _work(
    pending: Iterator[Dispatch],
    target: Target,
    url: str | None,
    recorder: Recorder,
    ended: list[Outcome],
    progress: Progress,
) -> None:
    # One shared iterator: whichever worker is free takes the next task in suite order.
    for dispatch in pending:
        outcome = await dispatch_one(dispatch, target, url, recorder)
        ended.append(outcome)
        progress.finished(outcome)


async def dispatch_one(
    dispatch: Dispatch, target: Target, url: str | None, recorder: Recorder
) -> Outcome:
    """One trace: root, request, answer, grade, root's end."""
    start_ns = time.time_ns()
    root = recorder.start(dispatch, url, start_ns)
    try:
        answer = await target.dispatch(dispatch, root)
    except Exception as exc:  # a bug of ours: recorded, logged, and the screening goes on
        log.exception("dispatch of %s failed inside the screener", dispatch.run_key)
        answer = failed("exception", f"screener error: {exc!r}")
    end_ns = time.time_ns()
    task = dispatch.task
    graded = grade(
        task.grader,
        answer.output,
        task.expected_output,
        answer.error_class,
        has_expected=task.has_expected,
    )
    recorder.finish(root, answer, graded, end_ns)
    return Outcome(
        task_id=task.id,
        round=dispatch.round,
        error_class=answer.error_class,
        passed=graded.passed,
        score=graded.score,
        latency_ms=(end_ns - start_ns) / 1e6,
        trace_id=f"{root.get_span_context().trace_id:032x}",
    )
