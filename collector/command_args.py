"""Every command's arguments but `serve`'s, `keys`' and `db`'s (collector.cli).

Declarations only, apart from the code that runs them: building the parser
imports argparse and the scoring policy's defaults, not the read layer,
httpx or the certificate code. Every CLI call builds the whole parser, and
those imports were about a third of a `keys create` (0.63 s of CPU to build
the parser against 0.30 s for the settings alone, issue 43).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import scoring
from scoring import policy


def _bounded(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high], as the API's page sizes are."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, not {number}")
        return number

    return parse


def _points(text: str) -> float:
    """An argparse type: --min-effect, a finite number of axis points >= 0."""
    try:
        return scoring.validate_min_effect(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a finite number >= 0, not {text!r}") from None


def add_read_commands(sub: Any) -> None:
    agents = sub.add_parser("agents", help="the leaderboard")
    agents.add_argument("--all", action="store_true", help="also non-agent services")
    score = sub.add_parser("score", help="stats, radar and pass^k of one agent")
    score.add_argument("agent", help="agent id or name")
    score.add_argument("--weights", default=None, help="e.g. correctness:2,latency:1")
    runs = sub.add_parser("runs", help="an agent's latest runs")
    runs.add_argument("agent", help="agent id or name")
    runs.add_argument("--limit", type=_bounded(1, 500), default=20, help="1 to 500")
    compare = sub.add_parser("compare", help="did a new version do better or worse?")
    compare.add_argument("agent", help="agent id or name")
    compare.add_argument("--base", default=None, help="version before (default: second newest)")
    compare.add_argument("--head", default=None, help="version after (default: newest)")
    compare.add_argument(
        "--min-effect",
        type=_points,
        default=policy.COMPARE_MIN_EFFECT,
        help="axis points a significant change must also move by to count (default 0; "
        f"a CI gate: {policy.COMPARE_GATE_MIN_EFFECT:g}, docs/loop.md)",
    )
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any axis regressed (gate a release in CI)",
    )
    compare.add_argument(
        "--junit", default=None, metavar="FILE", help="write a JUnit XML report (- for stdout)"
    )
    compare.add_argument(
        "--markdown", default=None, metavar="FILE", help="write a Markdown report (- for stdout)"
    )
    diagnose = sub.add_parser("diagnose", help="the weakest axis and the runs behind it")
    diagnose.add_argument("agent", help="agent id or name")
    diagnose.add_argument("--version", default=None, help="only runs of this version")
    diagnose.add_argument(
        "--limit", type=_bounded(1, 100), default=5, help="offenders per axis (1 to 100)"
    )
    for command in (score, runs, compare, diagnose):
        command.add_argument(
            "--owner", default=None, help="the agent's owner, when several owners use its name"
        )
    for command in (agents, score, runs, compare, diagnose):
        command.add_argument(
            "--url", default=None, help="read a server, e.g. http://127.0.0.1:4318"
        )
        command.add_argument("--database-url", dest="database_url", default=None)
    grade = sub.add_parser("grade", help="record a run's observed outcome (a grader key)")
    grade.add_argument("agent", help="the agent's name")
    grade.add_argument("run_key", help="the run's badge.run.id, else its trace id (hex)")
    outcome = grade.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--success", dest="success", action="store_true")
    outcome.add_argument("--fail", dest="success", action="store_false")
    grade.add_argument("--score", type=float, default=None, help="a grader's score")
    grade.add_argument("--expected", default=None, help="the expected output")
    grade.add_argument("--output", default=None, help="the output the grader saw")
    grade.add_argument("--error-class", default=None, help="e.g. wrong_answer")
    grade.add_argument(
        "--url", default=None, help="the server (default: http://127.0.0.1:BADGE_HTTP_PORT)"
    )
    grade.add_argument("--key", default=None, help="a grader key (default: $BADGE_KEY)")
    demo = sub.add_parser("demo", help="send realistic agent traffic to a running collector")
    demo.add_argument("--endpoint", default=None, help="OTLP/HTTP base URL (default: settings)")
    demo.add_argument("--key", default=None, help="ingest key (default: create one for `demo`)")
    demo.add_argument("--rounds", type=int, default=3)
    demo.add_argument("--database-url", dest="database_url", default=None)


def add_certificate_commands(sub: Any) -> None:
    check = sub.add_parser("verify", help="check a certificate's signature and digests")
    check.add_argument("file", help="the certificate (a DSSE envelope), or - for standard input")
    check.add_argument("--keys", default=None, help="a JWKS file (offline)")
    check.add_argument(
        "--url", default=None, help="a collector: its keys, and is it in its log? superseded?"
    )
    signing = sub.add_parser("signing-key", help="the key that signs certificates")
    signing_sub = signing.add_subparsers(dest="signing_command", required=True)
    rotate = signing_sub.add_parser("rotate", help="a new signing key; the old one is retired")
    rotate.add_argument("--signing-key", dest="signing_key", default=None)
    rotate.add_argument("--database-url", dest="database_url", default=None)
