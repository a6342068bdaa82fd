"""Whether the database can be written now, said once per change.

During an outage every export, read, sweep and recomputation fails the same
way. Each used to log its own traceback: a 75 s PostgreSQL outage wrote
146,175 lines, 2,635 of them tracebacks (issue 37). Now whatever meets a
failure asks `failed(exc)` first: a failure of the database itself
(storage.failures) marks it unavailable, logged once with its reason, and
the caller refuses its work as retryable (503 + Retry-After / UNAVAILABLE +
RetryInfo) without logging anything. The batch writer is the judge of
recovery: while the database is marked unavailable each of its transactions
carries a probe write (`probe_write`), and it tries one at least every
`PROBE_EVERY_S` even with nothing queued; the first that commits marks the
database back, logged once with how long it was gone. Readiness (/readyz)
reads `down`.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Final

from sqlalchemy import delete, insert

from api.problems import Unavailable
from collector.errors import StoreUnavailable
from collector.storage.failures import is_unavailable
from collector.storage.session import SqlSession
from collector.storage.tables import board_stale

log = logging.getLogger(__name__)

# How often the batch writer tries a write while the database is unavailable.
PROBE_EVERY_S: Final = 1.0


class DatabaseHealth:
    """The database's state as this process last met it: available, or
    unavailable since a moment, with how many operations failed since."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._failures = 0

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def failed(self, exc: BaseException) -> bool:
        """True when `exc` says the database is unusable now: the caller
        refuses its work as retryable and logs nothing (the first such
        failure is logged here). False for any other error."""
        if isinstance(exc, StoreUnavailable):  # a refusal made of such a failure, noted then
            return True
        if not is_unavailable(exc):
            return False
        with self._lock:
            self._failures += 1
            if self._down_since is not None:
                return True
            self._down_since = self._clock()
        log.error(
            "database unavailable (%s); exports and API writes answer 503 / UNAVAILABLE "
            "until it is back",
            _reason(exc),
        )
        return True

    def problem(self, exc: BaseException) -> Unavailable | None:
        """What the API answers when `exc` escapes a route
        (api.problem_answers.StoreFaults): 503 + Retry-After with the doors'
        sentence, or None for an error that is not the database's."""
        if not self.failed(exc):
            return None
        refusal = StoreUnavailable()
        return Unavailable(refusal.message, refusal.retry_after_s)

    def recovered(self) -> None:
        """A write committed: the database is back (logged once)."""
        with self._lock:
            if self._down_since is None:
                return
            lasted, failures = self._clock() - self._down_since, self._failures
            self._down_since, self._failures = None, 0
        log.warning(
            "database available again after %.1f s; %d operations were refused meanwhile",
            lasted,
            failures,
        )


def probe_write(session: SqlSession) -> None:
    """A write that needs the database writable (a page of log or WAL, which a
    full disk cannot take) and leaves nothing behind: one row added to and
    removed from a small table in the same transaction, invisible to anyone
    else. The id cannot be an agent's (theirs are UUIDs) nor another
    process's probe."""
    probe = f"probe-{uuid.uuid4().hex[:24]}"
    session.execute(insert(board_stale).values(agent_id=probe))
    session.execute(delete(board_stale).where(board_stale.c.agent_id == probe))


def _reason(exc: BaseException) -> str:
    """The driver's first line: for the operator's log, never for a client."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return f"{type(orig).__name__}: {text[0][:300]}" if text else type(orig).__name__
