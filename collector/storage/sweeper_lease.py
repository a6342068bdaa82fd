"""Which process sweeps timers and retention when several share one database.

Every process can recompute any trace correctly (a session's register_traces), so the
sweep is about not doing the same work twice, not about safety: on
PostgreSQL the sweeper is whoever holds a session advisory lock, kept on one
dedicated connection. When that process dies its connection closes, the
lock is released, and another process takes over at its next sweep. SQLite
is one writer by construction: its session grants the lease to every process.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from collector.storage.engine import Database

log = logging.getLogger(__name__)


class SweeperLease:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._conn: Connection | None = None
        self._lock = threading.Lock()  # the recompute thread and callers share one session

    def held(self) -> bool:
        """True when this process should sweep now (taking the lease if free)."""
        with self._lock:
            return self._check_or_take()

    def _check_or_take(self) -> bool:
        try:
            if self._conn is not None:
                self._conn.execute(text("SELECT 1"))  # still ours: the session is alive
                self._conn.commit()
                return True
            conn = self._db.reader.connect()
            if self._db.session(conn).try_sweeper_lock():
                conn.commit()
                self._conn = conn
                log.info("this process now sweeps timers and retention")
                return True
            conn.rollback()
            conn.close()
            return False
        except SQLAlchemyError as exc:
            # Said once when a held lease is lost; failing to take one during
            # an outage is the outage's own line (storage.health), not one a sweep.
            outage = self._db.health.failed(exc)
            if self._conn is not None or not outage:
                log.warning("sweeper lease lost: %s", str(exc).splitlines()[0])
            self._drop()
            return False

    def release(self) -> None:
        with self._lock:
            if self._conn is None:
                return
            try:
                self._db.session(self._conn).release_sweeper_lock()
                self._conn.commit()
                self._conn.close()
            except SQLAlchemyError:
                self._drop()
            self._conn = None

    def _drop(self) -> None:
        """Forget a broken session; never return it to the pool with a lock."""
        if self._conn is not None:
            self._conn.invalidate()
            self._conn.close()
        self._conn = None
