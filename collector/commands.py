"""The CLI's API commands: `agents`, `score AGENT`, `runs AGENT`, `compare
AGENT`, `diagnose AGENT`, `demo`, and `grade AGENT RUN_KEY`.

The reads read the database directly (same settings as `serve`) or a running
server with `--url`; either way the numbers are the read API's, because the
direct path calls the same read layer (api.views) the routes call, over the
read store `serve` opens (collector.storage.read_side). `grade` posts to a
server: a grade is stored by the collector that writes runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel

from api.auth import LOCAL_CALLER
from api.ports import ALL_RUNS, RunFilter
from api.problems import Problem
from api.views import agents as agent_views
from api.views import loop as loop_views
from api.views import runs as run_views
from collector.reports.compare import check_targets, write_compare
from collector.reports.words import TEST_NAMES
from collector.settings import Settings
from scoring import policy


class ReadFailed(Exception):
    """A read the collector refused (unknown agent, bad weights, nothing to compare)."""


class AmbiguousAgent(ReadFailed):
    """A name several owners' agents have, with no --owner to choose: exit 2."""


class Reader:
    """The read API's documents (as JSON values), from a server or from a database.

    `ServerReader` GETs them from a running collector; `DatabaseReader` calls
    the read layer (api.views) over a read store opened from the settings,
    the same functions the server's routes call, so the two cannot disagree.
    """

    def board(self, everything: bool, page_size: int = 50, cursor: str | None = None) -> Any:
        raise NotImplementedError

    def agent(self, agent_id: str) -> Any:
        """`GET /agents/{id}`'s document, or None for an unknown (or malformed) id."""
        raise NotImplementedError

    def stats(self, agent_id: str) -> Any:
        raise NotImplementedError

    def fitness(self, agent_id: str, weights: str | None) -> Any:
        raise NotImplementedError

    def reliability(self, agent_id: str) -> Any:
        raise NotImplementedError

    def runs(self, agent_id: str, limit: int) -> Any:
        raise NotImplementedError

    def versions(self, agent_id: str) -> Any:
        raise NotImplementedError

    def compare(self, agent_id: str, base: str | None, head: str | None, min_effect: float) -> Any:
        """With each axis's evidence (paired tasks, what a missing verdict lacks)."""
        raise NotImplementedError

    def diagnostics(self, agent_id: str, version: str | None, limit: int) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the reader holds (a connection pool, a database)."""

    def agent_id(self, name_or_id: str, owner: str | None = None) -> str:
        """The id of an agent given by id or by name (of `owner`, when given).

        Names are unique per owner only (docs/runs.md "Identity"): a name
        two owners use is refused with the candidates rather than read as
        whichever comes first."""
        found = self.agent(name_or_id)
        if found is not None and owner in (None, found["owner"]):
            return name_or_id
        named = sorted(
            (str(a["owner"]), str(a["id"]))
            for a in self._every_agent()
            if a["name"] == name_or_id and owner in (None, a["owner"])
        )
        if not named:
            under = f" of owner {owner!r}" if owner is not None else ""
            raise ReadFailed(f"no agent named {name_or_id!r}{under}")
        if len(named) > 1:
            listed = "".join(f"\n  owner {o!r}  id {i}" for o, i in named)
            raise AmbiguousAgent(
                f"{len(named)} agents are named {name_or_id!r}; name one with --owner "
                f"(or give its id):{listed}"
            )
        return named[0][1]

    def _every_agent(self) -> Iterator[Any]:
        """Every agent on the board (`?all=true`), page by page."""
        cursor = None
        while True:
            page = self.board(everything=True, page_size=500, cursor=cursor)
            yield from page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return


class ServerReader(Reader):
    """GET /api/v1/... of a running collector, through the client `screen` uses too."""

    def __init__(self, url: str) -> None:
        from collector.api_client import ApiClient  # httpx only for commands that talk HTTP

        self._client = ApiClient(url, None)

    def close(self) -> None:
        self._client.close()

    def _get(self, path: str, **params: Any) -> Any:
        status, body = self._fetch(path, **params)
        if status != 200:
            raise ReadFailed(str(_detail(body)))
        return body

    def _fetch(self, path: str, **params: Any) -> tuple[int, Any]:
        reply = self._client.get(path, **params)
        if reply.status == 0:  # no answer: the detail says why
            raise ReadFailed(reply.detail())
        return reply.status, reply.body

    def board(self, everything: bool, page_size: int = 50, cursor: str | None = None) -> Any:
        every = "true" if everything else None
        return self._get("/agents", all=every, page_size=page_size, cursor=cursor)

    def agent(self, agent_id: str) -> Any:
        status, body = self._fetch(f"/agents/{urllib.parse.quote(agent_id, safe='')}")
        return body if status == 200 else None

    def stats(self, agent_id: str) -> Any:
        return self._get(f"/agents/{agent_id}/stats")

    def fitness(self, agent_id: str, weights: str | None) -> Any:
        return self._get(f"/agents/{agent_id}/fitness", weights=weights)

    def reliability(self, agent_id: str) -> Any:
        return self._get(f"/agents/{agent_id}/reliability")

    def runs(self, agent_id: str, limit: int) -> Any:
        return self._get("/runs", agent_id=agent_id, page_size=limit)

    def versions(self, agent_id: str) -> Any:
        return self._get(f"/agents/{agent_id}/versions")

    def compare(self, agent_id: str, base: str | None, head: str | None, min_effect: float) -> Any:
        return self._get(
            f"/agents/{agent_id}/compare",
            base=base,
            head=head,
            evidence="true",
            min_effect=min_effect if min_effect else None,  # an older server knows no such thing
        )

    def diagnostics(self, agent_id: str, version: str | None, limit: int) -> Any:
        return self._get(f"/agents/{agent_id}/diagnostics", version=version, limit=limit)


class DatabaseReader(Reader):
    """The read layer over the settings' database, in this process, read as the
    keyless caller of --insecure (it has the database: it may read it all)."""

    def __init__(self, settings: Settings) -> None:
        import time

        from collector.storage.read_side import open_read_side

        self._db, self._side = open_read_side(settings, time.time)

    def close(self) -> None:
        self._db.dispose()

    def _answer(self, view: Callable[[], BaseModel], exclude_unset: bool = False) -> Any:
        """The view's document as the API would send it, or ReadFailed."""
        try:
            return view().model_dump(mode="json", exclude_unset=exclude_unset)
        except Problem as exc:
            raise ReadFailed(exc.detail) from None

    def board(self, everything: bool, page_size: int = 50, cursor: str | None = None) -> Any:
        reads = self._side.reads
        return self._answer(
            lambda: agent_views.board(
                reads, everything=everything, page_size=page_size, cursor=cursor
            )
        )

    def agent(self, agent_id: str) -> Any:
        try:
            return self._answer(lambda: agent_views.agent(self._side.reads, agent_id))
        except ReadFailed:
            return None

    def stats(self, agent_id: str) -> Any:
        return self._answer(lambda: agent_views.stats(self._side.reads, agent_id, ALL_RUNS))

    def fitness(self, agent_id: str, weights: str | None) -> Any:
        side = self._side
        return self._answer(
            lambda: agent_views.fitness(
                side.reads, side.weights, LOCAL_CALLER, agent_id, ALL_RUNS, weights
            )
        )

    def reliability(self, agent_id: str) -> Any:
        return self._answer(lambda: agent_views.reliability(self._side.reads, agent_id, ALL_RUNS))

    def runs(self, agent_id: str, limit: int) -> Any:
        reads = self._side.reads
        return self._answer(
            lambda: run_views.list_runs(reads, LOCAL_CALLER, agent_id=agent_id, page_size=limit)
        )

    def versions(self, agent_id: str) -> Any:
        return self._answer(lambda: loop_views.versions(self._side.reads, agent_id))

    def compare(self, agent_id: str, base: str | None, head: str | None, min_effect: float) -> Any:
        reads = self._side.reads
        return self._answer(
            lambda: loop_views.compare(
                reads, agent_id, base=base, head=head, evidence=True, min_effect=min_effect
            ),
            exclude_unset=True,  # as the route: `pairs` and `needed` only when asked for
        )

    def diagnostics(self, agent_id: str, version: str | None, limit: int) -> Any:
        where = RunFilter(version=version)
        return self._answer(
            lambda: loop_views.diagnostics(self._side.reads, agent_id, where, limit)
        )


def run_read_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "demo":
        from collector.demo import run_demo

        return run_demo(args, settings)
    if args.command == "grade":
        return post_grade(args, settings)
    reader: Reader = ServerReader(args.url) if args.url else DatabaseReader(settings)
    if isinstance(reader, DatabaseReader):  # which one, when several are about
        from collector.storage.engine import describe

        print(f"database: {describe(settings.database_url)}", file=sys.stderr)
    try:
        return _read(reader, args)
    except ReadFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, AmbiguousAgent) else 1
    finally:
        reader.close()


def _read(reader: Reader, args: argparse.Namespace) -> int:
    """One read command's answer, printed; its exit code."""
    if args.command == "agents":
        print_agents(reader.board(everything=args.all)["items"])
    elif args.command == "score":
        ident = reader.agent_id(args.agent, args.owner)
        print_score(
            reader.stats(ident), reader.fitness(ident, args.weights), reader.reliability(ident)
        )
    elif args.command == "compare":
        return compare_versions(reader, args)
    elif args.command == "diagnose":
        ident = reader.agent_id(args.agent, args.owner)
        body = reader.diagnostics(ident, args.version, args.limit)
        owner = (reader.agent(ident) or {}).get("owner")
        print_diagnosis(body, args.url or "http://127.0.0.1:4318", owner)
    else:
        ident = reader.agent_id(args.agent, args.owner)
        print_runs(reader.runs(ident, args.limit)["items"])
    return 0


def post_grade(args: argparse.Namespace, settings: Settings) -> int:
    """POST /api/v1/grades. 0: stored; 1: refused or unreachable; 2: no key."""
    key = args.key or os.environ.get("BADGE_KEY")
    if not key:
        print("error: a grader key is needed: --key KEY or BADGE_KEY", file=sys.stderr)
        return 2
    url = (args.url or f"http://127.0.0.1:{settings.http_port}").rstrip("/")
    body = {
        "agent": args.agent,
        "run_key": args.run_key,
        "success": args.success,
        "score": args.score,
        "expected_output": args.expected,
        "output": args.output,
        "error_class": args.error_class,
    }
    from collector.api_client import ApiClient

    client = ApiClient(url, key)
    try:
        reply = client.post("/grades", {k: v for k, v in body.items() if v is not None})
    finally:
        client.close()
    if not reply.ok:
        prefix = "" if reply.status == 0 else f"{reply.status}: "
        print(f"error: {prefix}{reply.detail()}", file=sys.stderr)
        return 1
    receipt = reply.body
    verdict = "success" if receipt["success"] else "fail"
    runs = ", ".join(receipt["run_ids"]) or "none stored yet; it applies when the run arrives"
    print(f"graded {receipt['agent']} run {receipt['run_key']}: {verdict} (runs: {runs})")
    return 0


def _detail(body: Any) -> Any:
    return body.get("detail", body) if isinstance(body, dict) else body


def compare_versions(reader: Reader, args: argparse.Namespace) -> int:
    """0: compared (no regression, or not asked to fail on one); 1: regressed
    with --fail-on-regression; 2: nothing to compare."""
    if (args.base is None) != (args.head is None):  # docs/loop.md "Compare": both or neither
        print("error: --base and --head are given together or not at all", file=sys.stderr)
        return 2
    problem = check_targets(args.junit, args.markdown)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        ident = reader.agent_id(args.agent, args.owner)
        if args.base is None:
            # The two newest *named* versions: runs without one only with `none`.
            named = [v for v in reader.versions(ident)["items"] if v["version"] is not None]
            if len(named) < 2:
                print(
                    f"error: {args.agent} has {len(named)} named version(s); compare needs "
                    "two (set badge.agent.version or service.version on your runs, or name "
                    "the sides: --base none --head V compares the runs without a version)",
                    file=sys.stderr,
                )
                return 2
        body = reader.compare(ident, args.base, args.head, args.min_effect)
    except ReadFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(
        sys.stderr if "-" in (args.junit, args.markdown) else sys.stdout
    ):
        print_comparison(body)  # out of the way of a report on stdout
    public = os.environ.get("BADGE_PUBLIC_URL") or args.url  # the dashboard, for links
    targets = (args.junit, args.markdown)
    for problem in (problems := write_compare(body, args.agent, ident, targets, public)):
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 2
    return 1 if args.fail_on_regression and body["regressed"] else 0


# How a paired task's figure reads, per axis; the worst change first.
PAIR_UNITS = {
    "correctness": ("pass rate", 2, False),
    "latency": ("median ms", 1, True),
    "cost": ("median USD", 6, True),
    "tool_efficiency": ("median steps", 1, True),
    "robustness": ("consistency", 2, False),
}
SHOWN_PAIRS = 5


def print_comparison(body: dict[str, Any]) -> None:
    """The verdicts as a table; under a paired verdict the tasks that drove it,
    and under an axis without a verdict what it is missing."""
    base, head = body["base"], body["head"]
    print(
        f"{'':<16} {'base':>10} {'head':>10} {'delta':>8}  {'verdict':<22}"
        f"{'test':<18} {'tasks':>5} {'p':>8} {'p adj.':>8}"
    )
    print(f"{'version':<16} {str(base['version']):>10} {str(head['version']):>10}")
    print(f"{'runs counted':<16} {base['runs_counted']:>10} {head['runs_counted']:>10}")
    composite = body["composite"]
    print(
        f"{'composite':<16} {_num(composite['base']):>10} {_num(composite['head']):>10} "
        f"{_num(composite['delta']):>8}"
    )
    for axis, change in body["axes"].items():
        paired = change.get("paired_tasks")
        print(
            f"{axis:<16} {_num(change['base']):>10} {_num(change['head']):>10} "
            f"{_num(change['delta']):>8}  {change['verdict']:<22}"
            f"{TEST_NAMES.get(change.get('test') or '', '-'):<18} "
            f"{'-' if paired is None else paired:>5} {_num(change['p_value'], 4):>8} "
            f"{_num(change.get('p_adjusted'), 4):>8}"
        )
        if change["verdict"] == "insufficient_evidence" and change.get("needed"):
            print(f"    needs: {change['needed']}")
        elif change["verdict"] in ("regressed", "improved") and paired is not None:
            print_pairs(axis, change.get("pairs") or [])
    moved = [t for t in body["tasks"] if t["change"] in ("broken", "fixed", "new", "gone")]
    for task in moved:
        print(
            f"  task {task['task_id']}: {task['change']} "
            f"({task['base_successes']}/{task['base_n']} -> "
            f"{task['head_successes']}/{task['head_n']})"
        )
    least = body.get("min_effect") or 0.0
    if least:
        print(f"(a verdict also needs the axis to move by at least {least:g} points)")
    print("REGRESSED" if body["regressed"] else "no regression")


def print_pairs(axis: str, pairs: list[dict[str, Any]]) -> None:
    """The paired tasks that moved most in the verdict's direction."""
    unit, digits, larger_is_worse = PAIR_UNITS[axis]
    moved = [p for p in pairs if p["delta"] != 0]
    moved.sort(key=lambda p: (-p["delta"] if larger_is_worse else p["delta"], p["task_id"]))
    print(f"    {len(moved)} of {len(pairs)} paired tasks moved ({unit}, base -> head):")
    for pair in moved[:SHOWN_PAIRS]:
        print(
            f"      {pair['task_id']:<24} {pair['base']:.{digits}f} -> {pair['head']:.{digits}f}"
            f"  ({pair['delta']:+.{digits}f})"
        )
    if len(moved) > SHOWN_PAIRS:
        print(f"      ... and {len(moved) - SHOWN_PAIRS} more")


def print_diagnosis(body: dict[str, Any], server: str, owner: str | None = None) -> None:
    weakest = body["weakest_axis"]
    print(f"weakest axis: {weakest or '(none: every axis is full or has no evidence)'}")
    print_coverage_warning(body.get("coverage_warning"), server, body["agent_id"])
    trace = 'curl -H "authorization: Bearer $KEY" ' + f"{server.rstrip('/')}/api/v1/runs/{{}}/trace"
    if any(o.get("run_id") for found in body["axes"].values() for o in found["offenders"]):
        # A trace is its owner's (docs/api.md): the first-start key is owner local's.
        whose = f"owner {owner!r}" if owner else "the agent's owner"
        print(f"(a trace needs a key of {whose}: set KEY to one before the commands below)")
    for axis, found in body["axes"].items():
        if not found["offenders"]:
            continue
        marker = "  <- weakest" if axis == weakest else ""
        print(f"{axis} ({_num(found['score'], 1)}){marker}")
        for o in found["offenders"]:
            if "run_id" in o:
                print(
                    f"  run {o['run_id']}  task {o['task_id'] or '-'}  version "
                    f"{o['version'] or '-'}  {_offending(axis, o['value'])}"
                )
                print(f"    trace: {trace.format(o['run_id'])}")
            else:
                print(
                    f"  task {o['task_id']}: {o['successes']}/{o['runs']} passed, runs "
                    f"{', '.join(o['run_ids'][:3])}"
                )


def print_coverage_warning(warning: dict[str, Any] | None, server: str, agent_id: str) -> None:
    """CONVENTIONS.md section 6: more than 10% of the agent's spans were not
    recognised, so a low step count may be a blind spot rather than an
    efficient agent. Says which scopes, and where the detail is."""
    if not warning:
        return
    print(
        f"warning: {warning['message']} ({warning['unrecognised_spans']} of "
        f"{warning['spans']} spans of the newest {warning['runs_counted']} runs): its tool "
        "steps, LLM calls and tokens may be undercounted"
    )
    detail = f"{server.rstrip('/')}/api/v1/agents/{agent_id}/coverage"
    print(f"  which spans: {detail} (owner's key); a convention file for those scopes fixes it")
    print("  (docs/conventions.md: `badge-collector conventions check FILE`, then --conventions)")


def _offending(axis: str, value: Any) -> str:
    """A run offender's figure in words, as the dashboard shows it ("failed",
    not "value False")."""
    if axis == "correctness":
        return "failed"
    if axis == "latency":
        return f"{value:,.0f} ms"
    if axis == "cost":
        return f"${value:.4f}"
    return f"{value} steps"


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_agents(items: list[dict[str, Any]]) -> None:
    print(f"{'#':>3}  {'agent':<28} {'owner':<14} {'score':>7} {'runs':>6}  last run")
    for rank, a in enumerate(items, 1):
        print(
            f"{rank:>3}  {a['name'][:28]:<28} {a['owner'][:14]:<14} "
            f"{_num(a['composite_score']):>7} {a['total_runs']:>6}  {a['last_run_at'] or '-'}"
        )
    if not items:
        print("  (no agents yet: point an OpenTelemetry exporter here, or run `make demo`)")


def _bar(value: float | None, width: int = 30) -> str:
    if value is None:
        return "(no evidence)".ljust(width)
    filled = round(value / 100 * width)
    return "█" * filled + "·" * (width - filled)


def print_score(stats: dict[str, Any], fitness: dict[str, Any], repeat: dict[str, Any]) -> None:
    print(f"composite {_num(stats['composite_score'])}  (policy {stats['scoring_policy']})")
    print(
        f"  verified state: {stats['verified_state'] or '- (no completed run)'} "
        f"({stats['graded_runs']} of {stats['completed_runs']} completed runs graded)"
    )
    # `failed_runs` counts runs in status `failed`: a harness that could not
    # run them (docs/api.md), not the runs that failed their task.
    unsuccessful = stats["completed_runs"] - stats["successful_runs"]
    print(
        f"  runs {stats['total_runs']}: completed {stats['completed_runs']} (successful "
        f"{stats['successful_runs']}, unsuccessful {unsuccessful}), infrastructure failures "
        f"{stats['failed_runs']}, timeout {stats['timeout_runs']}, running {stats['running_runs']}"
    )
    print(
        f"  success {_num(stats['success_rate'], 4)}  consistency "
        f"{_num(stats['consistency'], 4)}  latency {_num(stats['latency_score'], 4)}  "
        f"cost {_num(stats['cost_score'], 4)} ({stats['cost_source'] or 'unknown'})"
    )
    print(
        f"  avg latency {_num(stats['avg_latency_ms'], 1)} ms, avg cost "
        f"${_num(stats['avg_cost_usd'], 5)}"
    )
    print(
        f"fitness radar over {fitness['runs_counted']} runs "
        f"(weighted {_num(fitness['composite_score'])})"
    )
    for axis in ("correctness", "latency", "cost", "tool_efficiency", "robustness"):
        print(f"  {axis:<16} {_bar(fitness[axis])} {_num(fitness[axis], 1):>6}")
    print(
        f"repeatability over {repeat['tasks_counted']} tasks: pass^1 {_num(repeat['pass_1'], 3)}"
        f"  pass^3 {_num(repeat['pass_3'], 3)}  pass^5 {_num(repeat['pass_5'], 3)}"
        f"{_pass_5_note(repeat['tasks'])}"
    )


def _pass_5_note(tasks: list[dict[str, Any]]) -> str:
    """pass^5 is 0 for a task with fewer than 5 runs (docs/scoring.md): say so
    beside it, or a perfect 3-round screening reads as never repeatable."""
    k = max(policy.PASS_K_LEVELS)
    short = sum(1 for task in tasks if task["n"] < k)
    if not short:
        return ""
    return f"  (k = {k} needs {k} runs a task: {short} of {len(tasks)} tasks have fewer, count 0)"


def print_runs(items: list[dict[str, Any]]) -> None:
    # as wide as the longest task id shown: ids were cut at 16 characters
    wide = max([4, *(len(str(r["task_id"] or "-")) for r in items)])
    print(
        f"{'started':<27} {'task':<{wide}} {'status':<10} {'ok':<5} {'steps':>5} {'llm':>4} "
        f"{'ms':>9} {'cost $':>9}"
    )
    for r in items:
        ok = "-" if r["success"] is None else ("yes" if r["success"] else "no")
        print(
            f"{r['started_at']:<27} {str(r['task_id'] or '-'):<{wide}} {r['status']:<10} "
            f"{ok:<5} {'-' if r['steps'] is None else r['steps']:>5} {r['llm_calls']:>4} "
            f"{_num(r['latency_ms'], 1):>9} {_num(r['cost_usd'], 5):>9}"
        )
