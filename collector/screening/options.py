"""The `screen` command's flags, checked before anything is sent (usage errors exit 2).

argparse checks the types; this module checks what argparse cannot (ranges,
the screening id's pattern, header syntax, the endpoint's URL) and returns
the problem as a string rather than raising, so the command decides the
exit code in one place.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from collector.reports.output import STDOUT, check_path
from collector.screening.http_target import RESERVED_HEADERS
from collector.screening.plan import SCREENING_ID, new_screening_id

MAX_ROUNDS = 100  # SCREEN.md section 1, as for a suite's own rounds
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")  # RFC 9110 field name


@dataclass(frozen=True, slots=True)
class Options:
    """The checked flags; `screening_id` is filled in when not given."""

    agent: str
    suite: Path
    endpoint: str | None
    target: str | None
    rounds: int | None
    concurrency: int
    version: str | None
    headers: dict[str, str]
    collector_url: str | None
    key: str | None
    settle: float
    screening_id: str
    resume: bool
    baseline: str | None
    fail_on_regression: bool
    json: bool
    junit: str | None = None
    markdown: str | None = None
    certificate: str | None = None

    @property
    def reports_take_stdout(self) -> bool:
        """A report goes to standard output: the table goes to stderr, out of its way."""
        return STDOUT in (self.junit, self.markdown)


def parse_header(text: str) -> tuple[str, str] | str:
    """`Name: value` -> (name, value), or what is wrong with it."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _TOKEN.match(name):
        return f"--header {text!r}: expected 'Name: value'"
    if any(ch in value for ch in "\r\n\0"):
        return f"--header {name}: a value cannot hold a line break"
    if name.lower() in RESERVED_HEADERS:
        return f"--header {name}: the screener sets this header itself"
    return name, value


def _http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def check_options(args: argparse.Namespace) -> Options | str:
    """The flags as Options, or the first usage error."""
    if args.rounds is not None and not 1 <= args.rounds <= MAX_ROUNDS:
        return f"--rounds must be 1..{MAX_ROUNDS}, got {args.rounds}"
    if args.concurrency < 1:
        return f"--concurrency must be at least 1, got {args.concurrency}"
    if not args.settle >= 0:
        return f"--settle must be 0 or more seconds, got {args.settle}"
    if args.resume and args.screening_id is None:
        return "--resume needs the --screening-id of the screening to continue"
    screening_id = args.screening_id or new_screening_id()
    if not SCREENING_ID.match(screening_id):
        return f"--screening-id {screening_id!r} must match [A-Za-z0-9._:-]{{1,64}}"
    if args.fail_on_regression and args.baseline is None:
        return "--fail-on-regression needs --baseline VERSION"
    if not args.agent.strip():
        return "the agent's name must not be empty"
    if args.endpoint is not None and not _http_url(args.endpoint):
        return f"--endpoint {args.endpoint!r}: expected an http:// or https:// URL"
    headers: dict[str, str] = {}
    for text in args.header:
        parsed = parse_header(text)
        if isinstance(parsed, str):
            return parsed
        headers[parsed[0]] = parsed[1]
    problem = _check_reports(args)  # last: it makes the reports' folders
    if problem is not None:
        return problem
    return Options(
        agent=args.agent,
        suite=args.suite,
        endpoint=args.endpoint,
        target=args.target,
        rounds=args.rounds,
        concurrency=args.concurrency,
        version=args.version,
        headers=headers,
        collector_url=args.url,
        key=args.key,
        settle=args.settle,
        screening_id=screening_id,
        resume=args.resume,
        baseline=args.baseline,
        fail_on_regression=args.fail_on_regression,
        json=args.json,
        junit=args.junit,
        markdown=args.markdown,
        certificate=args.certificate,
    )


def _check_reports(args: argparse.Namespace) -> str | None:
    """At most one document on stdout; report files that can be written (their folders
    are made now, before a long screening, rather than found missing after it)."""
    on_stdout = [
        flag
        for flag, used in (
            ("--json", args.json),
            ("--junit -", args.junit == STDOUT),
            ("--markdown -", args.markdown == STDOUT),
        )
        if used
    ]
    if len(on_stdout) > 1:
        return f"{' and '.join(on_stdout)} would both print to stdout: give one a file"
    if args.certificate == STDOUT:
        return "--certificate needs a file (the certificate is an artifact to keep)"
    for flag, target in (
        ("--junit", args.junit),
        ("--markdown", args.markdown),
        ("--certificate", args.certificate),
    ):
        problem = check_path(flag, target)
        if problem is not None:
            return problem
    return None
