"""How a screening shows its progress, on stderr (SCREEN.md section 6).

A terminal gets a live bar (done / total, passed, errors, elapsed,
remaining); anything else (CI logs, a pipe) gets one line per finished
round, because a bar redrawn into a log file is noise. stdout stays free
for the closing table or the `--json` document.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from collector.screening.screener import Outcome


def round_line(round_number: int, rounds: int, outcomes: Sequence[Outcome], elapsed: float) -> str:
    """`round 2/3: 10 dispatched, 8 passed, 1 error (timeout 1), 3.2 s`."""
    passed = sum(o.passed for o in outcomes)
    errors = Counter(o.error_class for o in outcomes if o.error_class != "none")
    count = sum(errors.values())
    detail = ", ".join(f"{name} {n}" for name, n in sorted(errors.items()))
    return (
        f"round {round_number}/{rounds}: {len(outcomes)} dispatched, {passed} passed, "
        f"{count} error{'' if count == 1 else 's'}{f' ({detail})' if detail else ''}, "
        f"{elapsed:.1f} s"
    )


class RoundLines:
    """One line per finished round: for logs and pipes."""

    def __init__(self, rounds: int, stream: TextIO | None = None) -> None:
        self.rounds = rounds
        self.stream = stream or sys.stderr
        self.started = time.monotonic()

    def finished(self, outcome: Outcome) -> None:
        """Nothing per dispatch: a log gets rounds, not thousands of lines."""

    def round_ended(self, round_number: int, outcomes: Sequence[Outcome]) -> None:
        elapsed = time.monotonic() - self.started
        print(round_line(round_number, self.rounds, outcomes, elapsed), file=self.stream)
        self.stream.flush()

    def close(self) -> None:
        """Every line is already out."""


class Bar:
    """A live bar on a terminal, with the round lines printed above it."""

    def __init__(self, rounds: int, total: int) -> None:
        self.rounds = rounds
        self.started = time.monotonic()
        self.passed = 0
        self.errors = 0
        self._progress = Progress(
            TextColumn("screening"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("passed {task.fields[passed]}"),
            TextColumn("errors {task.fields[errors]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task: TaskID = self._progress.add_task("screening", total=total, passed=0, errors=0)
        self._progress.start()

    def finished(self, outcome: Outcome) -> None:
        self.passed += outcome.passed
        self.errors += outcome.error_class != "none"
        self._progress.update(self._task, advance=1, passed=self.passed, errors=self.errors)

    def round_ended(self, round_number: int, outcomes: Sequence[Outcome]) -> None:
        elapsed = time.monotonic() - self.started
        self._progress.console.print(round_line(round_number, self.rounds, outcomes, elapsed))

    def close(self) -> None:
        self._progress.stop()


def progress_for(rounds: int, total: int, stream: TextIO | None = None) -> Bar | RoundLines:
    """The bar on a terminal, round lines otherwise."""
    shown = stream or sys.stderr
    return Bar(rounds, total) if shown.isatty() else RoundLines(rounds, shown)
