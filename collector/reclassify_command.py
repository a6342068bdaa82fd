"""`badge-collector reclassify`: recompute stored runs under the current
conventions while no server runs (CONVENTIONS.md section 5; a running
server does it by itself, collector.runs.reclassifying).

Exit codes: 0 every stale run done, 1 a failure (the database, a server
holding the sweeper lease, runs left that could not be done), 2 bad usage
(arguments, convention files that do not load, an unknown agent), 130
interrupted (Ctrl-C: the batch in progress commits; run again to go on).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from typing import Any

from collector.settings import Settings

DONE, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130


def add_reclassify_command(sub: Any) -> None:
    command = sub.add_parser(
        "reclassify",
        help="recognise stored spans again under the current conventions and recompute "
        "their runs (while no server runs)",
    )
    command.add_argument(
        "--agent", default=None, help="only this agent's runs (its id, or its name)"
    )
    command.add_argument("--database-url", dest="database_url", default=None)
    command.add_argument(
        "--conventions",
        dest="conventions",
        action="append",
        default=None,
        help="a file or folder of your own, as `serve --conventions` (repeat for more)",
    )


def run_reclassify(args: argparse.Namespace, settings: Settings) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from collector.conventions import ConventionError, load_active
    from collector.storage.engine import describe, open_existing
    from collector.storage.migrate import create_schema

    try:
        conventions = load_active(settings.conventions)
    except ConventionError as exc:
        print("error: convention files do not load:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return USAGE
    db = open_existing(settings.database_url, synchronous=settings.sqlite_synchronous)
    print(f"database: {describe(settings.database_url)}", file=sys.stderr)
    try:
        create_schema(db)  # an older database is brought up to date first, as serve does
        return _reclassify(args, settings, db, conventions)
    except SQLAlchemyError as exc:
        print(f"error: the database failed: {str(exc).splitlines()[0]}", file=sys.stderr)
        return FAILED
    finally:
        db.dispose()


def _reclassify(args: argparse.Namespace, settings: Settings, db: Any, conventions: Any) -> int:
    from collector.runs.reclassify import DirectJobs, Reclassifier
    from collector.storage.board import catch_up
    from collector.storage.read_side import run_timers
    from collector.storage.sweeper_lease import SweeperLease

    agents = None
    if args.agent is not None:
        agents = _agents(db, args.agent)
        if not agents:
            print(f"error: no agent has the id or name {args.agent!r}", file=sys.stderr)
            return USAGE
    lease = SweeperLease(db)
    if not lease.held():  # PostgreSQL: a running server holds it, and reclassifies itself
        print(
            "error: another process holds this database's sweeper lease (a running server "
            "reclassifies by itself; stop it to run this command)",
            file=sys.stderr,
        )
        return FAILED
    try:
        work = Reclassifier(
            db,
            conventions,
            run_timers(settings),
            time.time,
            DirectJobs(db, time.time),
            agents=agents,
        )
        interrupted = threading.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
        try:
            progress = work.count()
            bar = _Bar(progress.remaining)
            while not interrupted.is_set() and work.step():
                bar.show(progress.reclassified, progress.remaining)
            bar.close()
        finally:
            signal.signal(signal.SIGINT, previous)
        with db.writing() as session:  # scores and the board follow at once
            catch_up(session, time.time())
    finally:
        lease.release()
    print(
        f"reclassified {progress.reclassified} runs under conventions {work.digest}; "
        f"{progress.sealed} sealed runs keep the counts of the conventions they were "
        f"recognised under; {progress.remaining} left"
    )
    if interrupted.is_set() and not progress.done:
        print("interrupted: run the command again to go on", file=sys.stderr)
        return INTERRUPTED
    return DONE if progress.remaining == 0 else FAILED


def _agents(db: Any, given: str) -> list[str]:
    from sqlalchemy import or_, select

    from collector.storage.tables import agents

    with db.reader.connect() as conn:
        rows = conn.execute(
            select(agents.c.id).where(or_(agents.c.id == given, agents.c.name == given))
        )
        return [row[0] for row in rows]


class _Bar:
    """Progress on stderr: a bar redrawn in place on a terminal, a line every
    few seconds otherwise (a log file, CI)."""

    def __init__(self, total: int) -> None:
        self._total = max(total, 1)
        self._tty = sys.stderr.isatty()
        self._said = time.monotonic()

    def show(self, done: int, remaining: int) -> None:
        total = max(self._total, done + remaining)
        if self._tty:
            filled = int(30 * done / total)
            line = f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} runs"
            print(line, end="", file=sys.stderr, flush=True)
        elif time.monotonic() - self._said >= 5:
            self._said = time.monotonic()
            print(f"reclassified {done} of {total} runs", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._tty:
            print(file=sys.stderr)
