"""The reports of one `screen` (issue 41): what is known at the end, as JUnit and Markdown.

`Gathered` fills in as the command finishes: the screener's outcomes first,
then what the collector answers (the runs, the screening's document, the
verified state, the certificate, the gate's compare). Whatever stage the
command stops at (the collector gone, the runs lost, a regression), the
reports are written from what was gathered by then, so a CI job that fails
has its reports too. Where the collector's document is known, a round it
has no run of is `missing` whatever the screener saw: the scores, and the
certificate, are the collector's.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from collector.reports.facts import (
    CertificateFacts,
    CompareFacts,
    Links,
    RoundFacts,
    RoundState,
    ScreeningFacts,
    TaskFacts,
)
from collector.reports.junit import compare_suite, junit_document, screening_suite
from collector.reports.markdown import screening_markdown
from collector.reports.output import (
    STDOUT,
    ReportNotWritten,
    same_file,
    step_summary,
    write_report,
)
from collector.reports.text import cut
from collector.screening.options import Options
from collector.screening.plan import Screening
from collector.screening.screener import Outcome
from collector.screening.suite import Task
from scoring.graders import expected_text

PUBLIC_URL = "BADGE_PUBLIC_URL"  # where readers reach the dashboard, if not at --url


@dataclass
class Gathered:
    """What one screening's end has learnt so far; `outcome` and `exit_code` are the
    conclusion, which stays "stopped before it concluded" until one is reached."""

    outcomes: list[Outcome]
    started_at: str
    elapsed_s: float
    agent_id: str | None = None
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # by trace id
    document: dict[str, Any] | None = None
    verified_state: str | None = None
    compare: CompareFacts | None = None
    certificate: CertificateFacts | None = None
    notes: list[str] = field(default_factory=list)
    outcome: str = "the screener stopped before it concluded"
    exit_code: int = 2

    def conclude(self, exit_code: int, outcome: str) -> int:
        self.exit_code, self.outcome = exit_code, outcome
        return exit_code


def public_url(options: Options) -> str | None:
    """The collector's address for links: BADGE_PUBLIC_URL, else an explicit --url (a
    collector only the CI job reaches, as BADGE_URL often is, would make dead links)."""
    return os.environ.get(PUBLIC_URL) or options.collector_url or None


def _state(outcome: Outcome) -> RoundState:
    if outcome.error_class != "none":
        return "error"
    return "passed" if outcome.passed else "failed"


def _round(
    number: int,
    outcome: Outcome | None,
    stored: list[bool | None] | None,
    gathered: Gathered,
) -> RoundFacts:
    """A round as the screener saw it, checked against what the collector stored."""
    if outcome is None:  # an earlier screener's (--resume), or never dispatched
        known = stored[number - 1] if stored is not None and number <= len(stored) else None
        state: RoundState = "missing" if known is None else ("passed" if known else "failed")
        return RoundFacts(number, state)
    run = gathered.runs.get(outcome.trace_id)
    state = "missing" if gathered.document is not None and run is None else _state(outcome)
    return RoundFacts(
        round=number,
        state=state,
        error_class=outcome.error_class,
        output=outcome.output,
        detail=outcome.detail,
        run_id=None if run is None else str(run["id"]),
        latency_ms=outcome.latency_ms,
    )


def _task(task: Task, rounds: tuple[RoundFacts, ...], row: dict[str, Any] | None) -> TaskFacts:
    latencies = [r.latency_ms for r in rounds if r.latency_ms is not None]
    if row is not None:
        p50 = row.get("latency_p50_ms")
    else:
        p50 = statistics.median(latencies) if latencies else None
    return TaskFacts(
        task_id=task.id,
        grader=task.grader,
        expected=cut(expected_text(task.expected_output)) if task.has_expected else None,
        rounds=rounds,
        latency_p50_ms=p50,
    )


def screening_facts(screening: Screening, gathered: Gathered) -> ScreeningFacts:
    """The report's facts, task by task in suite order, round by round."""
    seen = {(o.task_id, o.round): o for o in gathered.outcomes}
    rows = {t["task_id"]: t for t in (gathered.document or {}).get("tasks") or []}
    tasks = []
    for task in screening.suite.tasks:
        row = rows.get(task.id)
        stored = None if row is None else list(row.get("outcomes") or [])
        rounds = tuple(
            _round(n, seen.get((task.id, n)), stored, gathered)
            for n in range(1, screening.rounds + 1)
        )
        tasks.append(_task(task, rounds, row))
    return ScreeningFacts(
        screening_id=screening.screening_id,
        agent=screening.agent,
        version=screening.version,
        suite_name=screening.suite.name,
        suite_digest=screening.suite.digest,
        rounds=screening.rounds,
        tasks=tuple(tasks),
        started_at=gathered.started_at,
        elapsed_s=gathered.elapsed_s,
        outcome=gathered.outcome,
        exit_code=gathered.exit_code,
        document=gathered.document,
        verified_state=gathered.verified_state,
        agent_id=gathered.agent_id,
        compare=gathered.compare,
        certificate=gathered.certificate,
        notes=tuple(gathered.notes),
    )


def write_reports(
    screening: Screening, options: Options, gathered: Gathered, say: Callable[[str], None]
) -> bool:
    """Every report asked for (and the step summary of a GitHub Actions step); False when
    one that a flag asked for could not be written (the command then exits 2)."""
    summary = None if options.markdown is not None else step_summary()
    if options.junit is None and options.markdown is None and summary is None:
        return True
    facts = screening_facts(screening, gathered)
    links = Links(public_url(options))
    written = True
    if options.junit is not None:
        suites = [screening_suite(facts)]
        if facts.compare is not None:
            suites.append(compare_suite(facts.compare))
        written &= _write("--junit", options.junit, junit_document(suites, "screen"), say)
    markdown = screening_markdown(facts, links)
    if options.markdown is not None:
        appended = same_file(options.markdown, step_summary())
        written &= _write("--markdown", options.markdown, markdown, say, append=appended)
    if summary is not None and not _write(
        "$GITHUB_STEP_SUMMARY", summary, markdown, say, append=True
    ):
        say("warning: the step summary ($GITHUB_STEP_SUMMARY) was not written")
    return written


def _write(
    flag: str, target: str, text: str, say: Callable[[str], None], *, append: bool = False
) -> bool:
    try:
        write_report(target, text, append=append)
    except ReportNotWritten as exc:
        say(f"error: {flag}: {exc}")
        return False
    if target != STDOUT:  # where to find it, in a CI job's log
        say(f"{flag} report {'added to' if append else 'written to'} {target}")
    return True
