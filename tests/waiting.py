"""Waiting for what another thread or process does (issue 43).

A test never assumes another thread, process or server has been quick: it
polls an observable condition until it holds or a deadline passes, and on a
miss it says what it saw last. The deadline is generous because this suite
shares two cores with other work (and `make flake` adds a CPU hog on both):
a step that takes a second on an idle machine may take ten. A condition that
holds returns at once, so a long deadline costs nothing when all is well.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from sqlalchemy.engine import make_url

T = TypeVar("T")

DEADLINE_S = 30.0  # what a step of about a second may take on a busy 2-core machine
POLL_S = 0.02  # the first pause: most conditions hold within a few polls
# Later pauses grow by half up to this: a read is often a query on an in-process
# collector, traced by coverage, and at 20 ms a ten-second wait beside a CPU hog
# read 500 times, taking CPU from the very work it waits for (issue 43).
POLL_MAX_S = 0.1


def wait_for(
    read: Callable[[], T],
    timeout: float = DEADLINE_S,
    *,
    until: Callable[[T], Any] = bool,
    what: str = "the condition",
    every: float | None = None,
) -> T:
    """Call `read()` until `until(value)` holds; return that value.

    Past `timeout` seconds it fails with the last value read, so a miss shows
    how far things got (the runs counted, the metric's value) rather than only
    that time ran out. It reads again after POLL_S, then a half longer each
    time up to POLL_MAX_S; `every` fixes the pause instead, for a test that
    must catch a moment (a reclassification half done) rather than a state.
    """
    deadline = time.monotonic() + timeout
    pause = POLL_S if every is None else every
    while True:
        seen = read()
        if until(seen):
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout:g} s; last seen: {seen!r}")
        time.sleep(pause)
        if every is None:
            pause = min(pause * 1.5, POLL_MAX_S)


def terminate_backends(database_url: str, pids_query: str, *params: Any) -> list[int]:
    """`pg_terminate_backend` the backends `pids_query` selects, then wait until they are gone.

    pg_terminate_backend only signals: it returns before the backend has
    exited, and a backend releases its locks (advisory ones included) on its
    way out, before it leaves pg_stat_activity. So a test that goes on at once
    races the server; once the pids are gone from pg_stat_activity, their
    sessions and locks are. Connects to the server's `postgres` database (the
    one named in the URL may refuse connections by then). Returns the pids.
    """
    url = make_url(database_url)
    admin = {"host": url.host, "port": url.port, "user": url.username, "dbname": "postgres"}
    with psycopg.connect(**admin, autocommit=True) as conn:  # type: ignore[arg-type]
        pids = [int(row[0]) for row in conn.execute(pids_query, params or None)]
        conn.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))

        def alive() -> list[int]:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,))
            return [int(row[0]) for row in rows]

        wait_for(alive, until=lambda left: not left, what=f"backends {pids} exiting")
    return pids


def running(thread: threading.Thread, function: str) -> bool:
    """Whether `thread` is inside `function` right now (a frame of it is on its stack).

    For the moments no metric shows: "the batch writer has taken the first
    batch and waits for the lock" is the writer thread inside its commit.
    """
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back
    return False
