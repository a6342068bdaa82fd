"""`badge-collector conventions list | check | explain` (CONVENTIONS.md section 7).

- `list`: the active set in the order spans are tried against it (the
  user's files from --conventions / BADGE_CONVENTIONS, then the built-ins),
  each with its source and version, and the digest runs record;
- `check FILE...`: loads the files as `serve` would (with the built-ins, so a
  name a built-in has is refused too); exit 0 when all load, else 2 and one
  line per problem, `file:line: field: message`;
- `explain RUN_ID`: each span of a stored run, its role and the convention
  and rule that decided it, or `unrecognised`: the trace view, as text.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import Any

from collector.settings import Settings

# The exit codes: 0 done, 1 a read refused (unknown run, no answer), 2 files that do not load.
FAILED, INVALID = 1, 2


def add_convention_commands(sub: Any) -> None:
    conventions = sub.add_parser(
        "conventions", help="the convention files that recognise tools, LLM calls and agents"
    )
    commands = conventions.add_subparsers(dest="conventions_command", required=True)
    listing = commands.add_parser("list", help="the active conventions in order, and the digest")
    listing.add_argument(
        "--conventions",
        dest="conventions",
        action="append",
        default=None,
        help="a file or folder of your own, as `serve --conventions` (repeat for more)",
    )
    check = commands.add_parser("check", help="load convention files as serve would")
    check.add_argument("files", nargs="+", metavar="FILE", help="a .yaml file, or a folder")
    explain = commands.add_parser("explain", help="how each span of a run was classified")
    explain.add_argument("run_id")
    explain.add_argument("--database-url", dest="database_url", default=None)
    explain.add_argument("--url", default=None, help="read a server, e.g. http://127.0.0.1:4318")
    explain.add_argument("--key", default=None, help="the owner's key with --url ($BADGE_KEY)")


def run_conventions_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.conventions_command == "list":
        return list_conventions(settings)
    if args.conventions_command == "check":
        return check_files(args.files)
    return explain_run(args, settings)


def list_conventions(settings: Settings) -> int:
    from collector.conventions import ConventionError, load_active

    try:
        active = load_active(settings.conventions)
    except ConventionError as exc:
        return _problems(exc)
    print(f"{'#':>3}  {'convention':<20} {'version':>7}  source")
    for number, convention in enumerate(active.conventions, 1):
        print(f"{number:>3}  {convention.name:<20} {convention.version:>7}  {convention.source}")
    print(f"digest {active.digest}")
    return 0


def check_files(paths: list[str]) -> int:
    from collector.conventions import ConventionError, builtin_sources, compile_set, user_sources

    try:
        mine = user_sources(paths)
        checked = compile_set(mine + builtin_sources())
    except ConventionError as exc:
        return _problems(exc)
    print(f"ok: {len(mine)} file(s) load; with the built-ins the digest is {checked.digest}")
    return 0


def _problems(exc: Any) -> int:
    for problem in exc.problems:
        print(problem)
    return INVALID


def explain_run(args: argparse.Namespace, settings: Settings) -> int:
    """The run's spans, each with how it was classified."""
    try:
        run, trace = _from_server(args) if args.url else _from_database(args.run_id, settings)
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
    unrecognised = run.get("unrecognised_spans")
    print(
        f"run {run['id']}: {run['span_count']} span(s), "
        f"{'?' if unrecognised is None else unrecognised} unrecognised, "
        f"conventions {run.get('conventions_digest') or 'unknown (stored before conventions)'}"
    )
    rows = list(_rows(trace["spans"], 0))
    width = min(60, max((len(name) for name, _, _ in rows), default=4))
    for name, role, how in rows:
        print(f"{name[:width]:<{width}}  {role:<6} {how}")
    if trace.get("truncated"):
        print("(the first 10,000 spans)")
    return 0


def _rows(nodes: list[dict[str, Any]], depth: int) -> Iterator[tuple[str, str, str]]:
    for node in nodes:
        how = node["classification"]
        yield "  " * depth + node["name"], how["role"], decided_by(how)
        yield from _rows(node["children"], depth + 1)


def decided_by(how: dict[str, Any]) -> str:
    """`genai:tool[0]` (the convention, its rule list and index), `unrecognised`,
    ... and why a span did not count."""
    if how.get("rule_role"):
        said = f"{how['convention']}:{how['rule_role']}[{how['rule_index']}]"
    elif how.get("unrecognised"):
        said = "unrecognised"
    elif how.get("convention"):
        said = f"{how['convention']} (known, no rule)"
    elif how.get("root") and how["rule"] == "unrecognised":
        said = "-"
    else:
        said = str(how["rule"])
    if how.get("root"):
        said += "  root"
    if how["role"] in ("tool", "llm") and not how["counted"]:
        said += f"  not counted: {how.get('reason') or 'no step'}"
    return said


def _from_database(run_id: str, settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    import time

    from api.auth import LOCAL_CALLER
    from api.problems import Problem
    from api.views import runs as run_views
    from collector.storage.read_side import open_read_side

    db, side = open_read_side(settings, time.time)
    try:
        run = run_views.run_detail(side.reads, LOCAL_CALLER, run_id)
        trace = run_views.trace(side.reads, LOCAL_CALLER, run_id)
    except Problem as exc:
        raise LookupError(f"{exc.detail}: {run_id}") from None
    finally:
        db.dispose()
    return run.model_dump(mode="json"), trace.model_dump(mode="json")


def _from_server(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    from collector.api_client import ApiClient, segment

    client = ApiClient(args.url, args.key or os.environ.get("BADGE_KEY"))
    try:
        run = client.get(f"/runs/{segment(args.run_id)}")
        trace = client.get(f"/runs/{segment(args.run_id)}/trace")
    finally:
        client.close()
    for reply in (run, trace):
        if not reply.ok:
            raise LookupError(f"{reply.status or 'no answer'}: {reply.detail()}")
    return run.body, trace.body
