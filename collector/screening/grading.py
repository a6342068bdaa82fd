"""Grading a dispatch's answer for the screener: off the event loop, the regex search bounded.

The graders are scoring.graders' (SCREEN.md section 2), pure functions; this
runs them in a thread so that a slow grade (a 1 MiB answer) does not hold
up the dispatches in flight, and gives the `regex` grader a search that
gives up after `regex_search.LIMIT_S` (issue 37 item 11). A grade that gave
up fails, score 0, with a note the command prints.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from collector.screening.answers import Answer
from collector.screening.regex_search import LIMIT_S, RegexSearcher, SearchGaveUp
from collector.screening.suite import Task
from scoring.graders import Grade, grade


@dataclass(frozen=True, slots=True)
class Graded:
    """A grade, and why it is not the grader's own verdict when it is not (`note`)."""

    grade: Grade
    note: str | None = None


class Grading:
    """Grades answers in threads; one child process serves every regex search."""

    def __init__(self, regex_limit_s: float = LIMIT_S) -> None:
        self._searcher = RegexSearcher(regex_limit_s)

    async def grade(self, task: Task, answer: Answer) -> Graded:
        return await asyncio.to_thread(self.grade_now, task, answer)

    def grade_now(self, task: Task, answer: Answer) -> Graded:
        try:
            graded = grade(
                task.grader,
                answer.output,
                task.expected_output,
                answer.error_class,
                has_expected=task.has_expected,
                search=self._searcher.search,
            )
        except SearchGaveUp as exc:
            note = f"the regex search gave up ({exc}): graded as a fail"
            return Graded(Grade(passed=False, score=0.0), note)
        return Graded(graded)

    def close(self) -> None:
        self._searcher.close()
