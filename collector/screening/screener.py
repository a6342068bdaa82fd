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

from collector.reports.text import cut
from collector.screening.answers import Answer, failed
from collector.screening.grading import Grading
from collector.screening.plan import Dispatch, Screening, Todo, round_dispatches
from collector.screening.recorder import Recorder

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
    """One dispatch as the screener saw it; `trace_id` (hex) finds its run in the collector.
    `note` says why its grade is not the grader's own verdict (a regex search that gave up).
    A failed dispatch keeps what came back (`output`: the answer, else the body) and why it
    failed (`detail`), each cut as a report shows them, for the reports (issue 41)."""

    task_id: str
    round: int
    error_class: str
    passed: bool
    score: float
    latency_ms: float
    trace_id: str
    note: str | None = None
    output: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Dispatcher:
    """What every dispatch of a screening goes through: where to, how recorded and graded.
    `url` is the target's url.full (None for a Python target)."""

    target: Target
    url: str | None
    recorder: Recorder
    grading: Grading
    progress: Progress


async def screen(
    screening: Screening, dispatcher: Dispatcher, concurrency: int, todo: Todo | None = None
) -> list[Outcome]:
    """Every round of the suite (with `todo`, only what it names); the outcomes in the order
    they ended. A round with nothing to do is skipped."""
    outcomes: list[Outcome] = []
    workers = max(1, min(concurrency, len(screening.suite.tasks)))
    for round_number in range(1, screening.rounds + 1):
        if todo is not None and not any(round_number in rounds for rounds in todo.values()):
            continue
        pending = round_dispatches(screening, round_number, todo)
        ended: list[Outcome] = []
        await asyncio.gather(*(_work(pending, dispatcher, ended) for _ in range(workers)))
        dispatcher.progress.round_ended(round_number, ended)
        outcomes.extend(ended)
    return outcomes


async def _work(pending: Iterator[Dispatch], dispatcher: Dispatcher, ended: list[Outcome]) -> None:
    # One shared iterator: whichever worker is free takes the next task in suite order.
    for dispatch in pending:
        outcome = await dispatch_one(dispatch, dispatcher)
        ended.append(outcome)
        dispatcher.progress.finished(outcome)


async def dispatch_one(dispatch: Dispatch, dispatcher: Dispatcher) -> Outcome:
    """One trace: root, request, answer, grade, root's end."""
    recorder = dispatcher.recorder
    start_ns = time.time_ns()
    root = recorder.start(dispatch, dispatcher.url, start_ns)
    try:
        answer = await dispatcher.target.dispatch(dispatch, root)
    except Exception as exc:  # a bug of ours: recorded, logged, and the screening goes on
        log.exception("dispatch of %s failed inside the screener", dispatch.run_key)
        answer = failed("exception", f"screener error: {exc!r}")
    end_ns = time.time_ns()
    task = dispatch.task
    graded = await dispatcher.grading.grade(task, answer)
    recorder.finish(root, answer, graded.grade, end_ns)
    passed = graded.grade.passed
    came_back = answer.output if answer.output is not None else answer.body
    why = answer.detail or graded.note
    return Outcome(
        task_id=task.id,
        round=dispatch.round,
        error_class=answer.error_class,
        passed=passed,
        score=graded.grade.score,
        latency_ms=(end_ns - start_ns) / 1e6,
        trace_id=f"{root.get_span_context().trace_id:032x}",
        note=graded.note,
        output=None if passed or came_back is None else cut(came_back),
        detail=None if passed or why is None else cut(why),
    )
