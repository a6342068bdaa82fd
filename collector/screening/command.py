"""The `screen` subcommand's flags (SCREEN.md section 6), wired into the CLI by collector.cli.

Only argparse here: building the CLI's parser must not import httpx, the
OpenTelemetry SDK and rich for every other command. The CLI runs the
command through `collector.screening.session.run`, which imports this
module (for the default URL) and never the other way round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:4318"


def add_screen_command(sub: Any) -> None:
    p = sub.add_parser("screen", help="send a suite to an agent, grade every answer, record runs")
    p.add_argument("agent", help="the agent's name (its runs' service.name / badge.agent.id)")
    p.add_argument("--suite", required=True, type=Path, help=".yaml, .yml, .json or .jsonl")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--endpoint", help="POST each task to this URL")
    target.add_argument("--target", help="call module.path:callable (cwd on sys.path)")
    p.add_argument("--rounds", type=int, default=None, help="override the suite's rounds")
    p.add_argument("--concurrency", type=int, default=4, help="dispatches at once (4)")
    p.add_argument("--version", default=None, help="the agent version screened")
    p.add_argument("--header", action="append", default=[], help="'Name: value' for the agent")
    p.add_argument("--url", default=None, help=f"the collector (BADGE_URL, else {DEFAULT_URL})")
    p.add_argument("--key", default=None, help="ingest key, a grader key to verify (BADGE_KEY)")
    p.add_argument(
        "--settle",
        type=float,
        default=10.0,
        help="seconds to wait for late spans; a collector outage is ridden out as long (>= 10)",
    )
    p.add_argument("--screening-id", default=None, help="default: <UTC time>-<6 hex>")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the screening --screening-id names: dispatch only what has no run",
    )
    p.add_argument("--baseline", default=None, help="compare this version with the screening")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 if it regressed")
    p.add_argument("--json", action="store_true", help="print the screening's JSON document")
    p.add_argument(
        "--junit", default=None, metavar="FILE", help="write a JUnit XML report (- for stdout)"
    )
    p.add_argument(
        "--markdown",
        default=None,
        metavar="FILE",
        help="write a Markdown report (- for stdout); without it, $GITHUB_STEP_SUMMARY gets one",
    )
    p.add_argument(
        "--certificate",
        default=None,
        metavar="FILE",
        help="write the screening's signed certificate once its runs have settled",
    )
