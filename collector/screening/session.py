"""One `badge-collector screen`: the checks before dispatching, the screening, its exit codes.

Exit 2 (usage, suite, target, unreachable collector, refused key) is only
ever returned before the first dispatch: whatever is wrong that can be
known up front is found up front, so a failed start records no half
screening. After that the screening always ends with its table; 1 means
the regression gate closed (SCREEN.md section 6).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from importlib import metadata
from typing import Any

from collector.screening.client import CollectorClient
from collector.screening.command import DEFAULT_URL
from collector.screening.document import fetch_document, wait_for_runs
from collector.screening.http_target import HttpTarget
from collector.screening.options import Options, check_options
from collector.screening.plan import Screening
from collector.screening.progress import progress_for
from collector.screening.python_target import PythonTarget, TargetError, load_callable
from collector.screening.recorder import Recorder
from collector.screening.report import compare, print_table
from collector.screening.screener import Outcome, Target, screen
from collector.screening.suite import SuiteError, load_suite

RUNS_WAIT_S = 10.0  # after --settle: how long to wait for runs still being assembled


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """0 done; 1 regression (with --fail-on-regression); 2 refused before dispatching."""
    options = check_options(args)
    if isinstance(options, str):
        _say(f"error: {options}")
        return 2
    try:
        suite = load_suite(options.suite)
    except SuiteError as exc:
        _say(f"error: suite {exc}")
        return 2
    target: Target
    if options.target is not None:
        try:
            target = PythonTarget(load_callable(options.target))
        except TargetError as exc:
            _say(f"error: {exc}")
            return 2
    url = options.collector_url or os.environ.get("BADGE_URL") or DEFAULT_URL
    key = options.key or os.environ.get("BADGE_KEY") or None
    client = CollectorClient(url, key)
    try:
        problem = _preflight(client, options)
        if problem is not None:
            _say(f"error: {problem}")
            return 2
        if options.endpoint is not None:
            target = HttpTarget(
                options.endpoint,
                options.headers,
                f"badge-collector/{_own_version()}",
                options.screening_id,
                options.concurrency,
            )
        screening = Screening(
            options.screening_id,
            options.agent,
            options.version,
            suite,
            options.rounds or suite.rounds,
        )
        return _screen(client, screening, target, options, url, key)
    finally:
        client.close()


def _preflight(client: CollectorClient, options: Options) -> str | None:
    """What stops the screening before its first dispatch, or None."""
    health = client.health()
    if not health.ok:
        why = health.detail() if health.status == 0 else f"/healthz answered {health.status}"
        return f"the collector at {client.url} is unreachable: {why}"
    probe = client.probe_key()
    if probe.status in (401, 403):
        return f"the collector refused the key ({probe.status}: {probe.detail()})"
    if probe.status == 0:
        return f"the collector at {client.url} is unreachable: {probe.detail()}"
    if not probe.ok:
        _say(f"warning: the collector answered the key check with {probe.status}")
    if options.baseline is not None:
        for agent_id in client.agents_named(options.agent):
            versions = client.get(f"/agents/{agent_id}/versions")
            if versions.ok and any(
                v["version"] == options.baseline for v in versions.body["items"]
            ):
                return None
        return f"--baseline {options.baseline}: {options.agent} has no runs of that version"
    return None


def _screen(
    client: CollectorClient,
    screening: Screening,
    target: Target,
    options: Options,
    url: str,
    key: str | None,
) -> int:
    recorder = Recorder(screening, url, key)
    if isinstance(target, PythonTarget) and not recorder.install_global():
        _say("note: the program set its own tracer provider; the target's spans go where it says")
    total = len(screening.suite.tasks) * screening.rounds
    _say(
        f"screening {screening.screening_id}: {options.agent}, suite {screening.suite.name}, "
        f"{len(screening.suite.tasks)} tasks x {screening.rounds} rounds"
    )
    progress = progress_for(screening.rounds, total)
    shown_url = target.shown_url if isinstance(target, HttpTarget) else None
    try:
        outcomes = asyncio.run(
            _dispatch_all(screening, target, shown_url, recorder, options.concurrency, progress)
        )
    finally:
        progress.close()
    delivery = recorder.close()
    if delivery.lost:
        _say(f"warning: {delivery.lost} of {total} runs' root spans did not reach the collector")
    time.sleep(options.settle)  # the agent's own late spans (SCREEN.md section 4)
    agent_id, runs = wait_for_runs(
        client, options.agent, screening.screening_id, outcomes, RUNS_WAIT_S
    )
    if agent_id is None:
        _say(f"error: none of the {total} runs of this screening is in the collector at {url}")
        return 1
    if len(runs) < total:
        _say(f"warning: {total - len(runs)} of {total} runs were not found in the collector")
    if any(run["success_source"] == "reported" for run in runs.values()):
        _say(
            "warning: the key is an agent key: outcomes are reported, not graded, and this "
            "screening will not count as verified (use a grader key: keys create --role grader)"
        )
    document = fetch_document(client, agent_id, screening, outcomes, runs)
    out = sys.stderr if options.json else sys.stdout
    if options.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print_table(document, outcomes, sys.stdout)
    if options.baseline is None:
        return 0
    verdict = compare(client, agent_id, options.baseline, screening.screening_id, screening.version)
    for line in verdict.lines:
        print(line, file=out)
    if options.fail_on_regression and verdict.regressed is not False:
        return 1  # regressed, or could not be compared: a gate fails closed
    return 0


async def _dispatch_all(
    screening: Screening,
    target: Target,
    url: str | None,
    recorder: Recorder,
    concurrency: int,
    progress: Any,
) -> list[Outcome]:
    try:
        return await screen(screening, target, url, recorder, concurrency, progress)
    finally:
        await target.close()


def _own_version() -> str:
    try:
        return metadata.version("badge-collector")
    except metadata.PackageNotFoundError:
        return "0"
