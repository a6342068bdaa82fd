"""What a report says, gathered by the command before any writer runs.

A screening's facts come from two witnesses: the screener, which saw every
answer it dispatched (its output, its error class), and the collector,
which stored the runs and computed the scores. When the collector cannot
be read after the dispatches (it went away, the runs never arrived), the
screener's facts alone still make a report: that is when a CI job needs
one most. The compare is the API's document as it came (docs/loop.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

# How one round of one task ended, from the report's point of view.
RoundState = Literal["passed", "failed", "error", "missing"]
# Error classes that mean no answer reached the grader (SCREEN.md section 3): the round
# is an error of the system under test or of the way to it, not a wrong answer.
NO_ANSWER: Final = frozenset(
    {"timeout", "connection_error", "http_error", "bad_response_shape", "exception"}
)


@dataclass(frozen=True, slots=True)
class RoundFacts:
    """One round of a task. `output` is what came back (a failed round only), `detail`
    why it failed, `run_id` its run. Texts here are cut already (`text.cut`)."""

    round: int
    state: RoundState
    error_class: str | None = None
    output: str | None = None
    detail: str | None = None
    run_id: str | None = None
    latency_ms: float | None = None

    @property
    def cause(self) -> str:
        """What ended the round, in one word: an error class, `wrong_answer` or `no_run`."""
        if self.state == "missing":
            return "no_run"
        if self.error_class in NO_ANSWER:
            return str(self.error_class)
        if self.error_class is None:  # a round an earlier screener dispatched (--resume)
            return "failed"
        return "wrong_answer"


@dataclass(frozen=True, slots=True)
class TaskFacts:
    """One task of the suite and its rounds, 1 first."""

    task_id: str
    grader: str
    expected: str | None  # the answer key as the grader compares it (cut); None without one
    rounds: tuple[RoundFacts, ...]
    latency_p50_ms: float | None = None

    @property
    def failed(self) -> tuple[RoundFacts, ...]:
        return tuple(r for r in self.rounds if r.state != "passed")

    @property
    def errored(self) -> bool:
        """Every round ended without an answer to grade (issue 41: a JUnit `<error>`)."""
        return bool(self.rounds) and all(r.state in ("error", "missing") for r in self.rounds)

    def causes(self) -> dict[str, int]:
        """The failed rounds by cause, most frequent first, then by name."""
        counted: dict[str, int] = {}
        for r in self.failed:
            counted[r.cause] = counted.get(r.cause, 0) + 1
        return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))

    def summary(self) -> str:
        """`2 of 3 rounds failed (timeout 1, wrong_answer 1)`."""
        causes = ", ".join(f"{name} {n}" for name, n in self.causes().items())
        return f"{len(self.failed)} of {len(self.rounds)} rounds failed" + (
            f" ({causes})" if causes else ""
        )


@dataclass(frozen=True, slots=True)
class CompareFacts:
    """A compare's document (`GET /agents/{id}/compare`) and how its sides were asked for
    (`base`, `head`, `base_screening`, `head_screening`), which the dashboard's page takes."""

    body: dict[str, Any]
    agent: str
    agent_id: str | None
    asked: dict[str, str]


@dataclass(frozen=True, slots=True)
class CertificateFacts:
    """The screening's certificate as written: where, and the digest a verifier checks."""

    path: str
    statement_digest: str
    verify_command: str


@dataclass(frozen=True, slots=True)
class ScreeningFacts:
    """Everything the screen command knows once it is done; `document` is the collector's
    screening document (None when it could not be read), `compare` the gate's compare."""

    screening_id: str
    agent: str
    version: str | None
    suite_name: str
    suite_digest: str
    rounds: int
    tasks: tuple[TaskFacts, ...]
    started_at: str  # UTC, `YYYY-MM-DDTHH:MM:SS` (the JUnit timestamp form)
    elapsed_s: float
    outcome: str  # the headline: what the command concluded, in words
    exit_code: int
    document: dict[str, Any] | None = None
    verified_state: str | None = None
    agent_id: str | None = None
    baseline: str | None = None
    compare: CompareFacts | None = None
    certificate: CertificateFacts | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def failed_tasks(self) -> tuple[TaskFacts, ...]:
        return tuple(t for t in self.tasks if t.failed)


@dataclass(frozen=True, slots=True)
class Links:
    """The dashboard's pages for a report, when the collector's public address is known."""

    base_url: str | None

    def page(self, path: str) -> str | None:
        return None if self.base_url is None else f"{self.base_url.rstrip('/')}{path}"
