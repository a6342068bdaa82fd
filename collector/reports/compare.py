"""`badge-collector compare --junit FILE --markdown FILE`: a compare's reports, written.

The same writers as `screen`'s second `<testsuite>` and its compare table,
so a gate run as `compare` and one run as `screen --baseline` read alike.
Returns the problems rather than raising: the command decides the exit code.
"""

from __future__ import annotations

from typing import Any

from collector.reports.facts import CompareFacts, Links
from collector.reports.junit import compare_suite, junit_document
from collector.reports.markdown import compare_markdown
from collector.reports.output import STDOUT, ReportNotWritten, check_path, write_report
from collector.reports.words import sides


def check_targets(junit: str | None, markdown: str | None) -> str | None:
    """What is wrong with the report paths before anything is read, or None."""
    if junit == STDOUT and markdown == STDOUT:
        return "--junit - and --markdown - would both print to stdout: give one a file"
    return check_path("--junit", junit) or check_path("--markdown", markdown)


def write_compare(
    body: dict[str, Any],
    agent: str,
    agent_id: str,
    targets: tuple[str | None, str | None],
    public_url: str | None,
) -> list[str]:
    """The JUnit and Markdown reports asked for (`targets`), written; what could not be.
    The compare page linked asks for the versions the document compared."""
    junit, markdown = targets
    base, head = sides(body)
    facts = CompareFacts(body, agent, agent_id, {"base": base, "head": head})
    problems: list[str] = []
    if junit is not None:
        problems += _put("--junit", junit, junit_document([compare_suite(facts)], "compare"))
    if markdown is not None:
        problems += _put("--markdown", markdown, compare_markdown(facts, Links(public_url)))
    return problems


def _put(flag: str, target: str, text: str) -> list[str]:
    try:
        write_report(target, text)
    except ReportNotWritten as exc:
        return [f"{flag}: {exc}"]
    return []
