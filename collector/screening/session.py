"""One `badge-collector screen`: the checks before dispatching, the screening, its exit codes.

Whatever is wrong that can be known up front is found up front (usage,
suite, target, unreachable collector, refused key, a screening id in use)
and exits 2 with nothing dispatched. Then the screener records its plan
with the collector (a grader key), so that the screening shows itself
incomplete until every dispatch has its run, even if this process is
killed; with `--resume` the collector answers what is missing and only
that is dispatched. After the dispatches: 2 again when any run did not
reach the collector (docs/screening.md "Exit codes"), else 1 when the
regression gate closed, else 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from datetime import UTC, datetime
from importlib import metadata

from collector.api_client import ApiClient
from collector.screening.command import DEFAULT_URL
from collector.screening.finish import finish
from collector.screening.grading import Grading
from collector.screening.http_target import HttpTarget
from collector.screening.options import Options, check_options
from collector.screening.plan import Screening, Todo, todo_count
from collector.screening.plans import PlanRefused, register
from collector.screening.progress import progress_for
from collector.screening.python_target import PythonTarget, TargetError, load_callable
from collector.screening.recorder import Recorder
from collector.screening.reporting import Gathered
from collector.screening.screener import Dispatcher, Outcome, Target, screen
from collector.screening.suite import SuiteError, load_suite


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """0 done; 1 regression (with --fail-on-regression); 2 refused before dispatching,
    or a screening that is incomplete at the end."""
    options = check_options(args)
    if isinstance(options, str):
        say(f"error: {options}")
        return 2
    try:
        suite = load_suite(options.suite)
    except SuiteError as exc:
        say(f"error: suite {exc}")
        return 2
    target: Target
    if options.target is not None:
        try:
            target = PythonTarget(load_callable(options.target))
        except TargetError as exc:
            say(f"error: {exc}")
            return 2
    url = options.collector_url or os.environ.get("BADGE_URL") or DEFAULT_URL
    key = options.key or os.environ.get("BADGE_KEY") or None
    screening = Screening(
        options.screening_id,
        options.agent,
        options.version,
        suite,
        options.rounds or suite.rounds,
    )
    # Reads and the plan ride out a collector's fault as the exports do.
    client = ApiClient(url, key, retry_s=max(options.settle, 10.0))
    try:
        problem = _preflight(client, options)
        if problem is not None:
            say(f"error: {problem}")
            return 2
        try:
            agent_id, todo = register(client, screening, resume=options.resume, say=say)
        except PlanRefused as exc:
            say(f"error: {exc}")
            return 2
        if options.endpoint is not None:
            target = HttpTarget(
                options.endpoint,
                options.headers,
                f"badge-collector/{_own_version()}",
                options.screening_id,
                options.concurrency,
            )
        started, clock = datetime.now(UTC), time.monotonic()
        outcomes = _dispatch(screening, target, options, url, key, todo)
        elapsed = time.monotonic() - clock
        gathered = Gathered(outcomes, f"{started:%Y-%m-%dT%H:%M:%S}", elapsed, agent_id)
        return finish(client, screening, options, gathered, say)
    finally:
        client.close()


def _preflight(client: ApiClient, options: Options) -> str | None:
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
        say(f"warning: the collector answered the key check with {probe.status}")
    if options.baseline is not None:
        for agent_id in client.agents_named(options.agent):
            versions = client.get(f"/agents/{agent_id}/versions")
            if versions.ok and any(
                v["version"] == options.baseline for v in versions.body["items"]
            ):
                return None
        return f"--baseline {options.baseline}: {options.agent} has no runs of that version"
    return None


def _dispatch(
    screening: Screening,
    target: Target,
    options: Options,
    url: str,
    key: str | None,
    todo: Todo | None,
) -> list[Outcome]:
    """Every dispatch still to make, recorded and flushed to the collector."""
    total = todo_count(screening, todo)
    recorder = Recorder(screening, url, key, retry_s=options.settle, dispatches=total)
    if isinstance(target, PythonTarget) and not recorder.install_global():
        say("note: the program set its own tracer provider; the target's spans go where it says")
    tasks = len(screening.suite.tasks)
    left = "" if todo is None else f", resumed: {total} of {tasks * screening.rounds} to dispatch"
    say(
        f"screening {screening.screening_id}: {options.agent}, suite {screening.suite.name}, "
        f"{tasks} tasks x {screening.rounds} rounds{left}"
    )
    progress = progress_for(screening.rounds, total)
    grading = Grading()
    dispatcher = Dispatcher(
        target=target,
        url=target.shown_url if isinstance(target, HttpTarget) else None,
        recorder=recorder,
        grading=grading,
        progress=progress,
    )
    try:
        outcomes = asyncio.run(_all(screening, dispatcher, options.concurrency, todo))
    finally:
        progress.close()
        grading.close()
    for outcome in outcomes:
        if outcome.note is not None:
            say(f"warning: task {outcome.task_id!r} round {outcome.round}: {outcome.note}")
    delivery = recorder.close()
    if delivery.lost:
        reasons = ", ".join(f"{why}: {n}" for why, n in delivery.reasons.most_common())
        say(
            f"warning: {delivery.lost} spans of this screening did not reach the collector"
            f" ({reasons})"
        )
    return outcomes


async def _all(
    screening: Screening, dispatcher: Dispatcher, concurrency: int, todo: Todo | None
) -> list[Outcome]:
    try:
        return await screen(screening, dispatcher, concurrency, todo)
    finally:
        await dispatcher.target.close()


def _own_version() -> str:
    try:
        return metadata.version("badge-collector")
    except metadata.PackageNotFoundError:
        return "0"
