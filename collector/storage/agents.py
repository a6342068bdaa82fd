"""Which agents exist and which are deleted: the check ingest makes per request."""

from __future__ import annotations

import threading
import time

from sqlalchemy import select, update

from collector.storage.engine import Database
from collector.storage.tables import agents

_REFRESH_S = 2.0


class AgentDirectory:
    """Which agents exist and which are deleted; refreshed every few seconds.

    A deletion made by another process (or the CLI) is seen within `_REFRESH_S`.
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._known: set[str] = set()
        self._deleted: frozenset[str] = frozenset()
        self._loaded_at = 0.0
        self._lock = threading.Lock()

    def is_deleted(self, ident: str) -> bool:
        self._refresh()
        return ident in self._deleted

    def is_known(self, ident: str) -> bool:
        return ident in self._known

    def remember(self, idents: set[str]) -> None:
        with self._lock:
            self._known |= idents

    def delete(self, agent_id: str, now: float) -> None:
        """Mark an agent deleted (its runs stay); its spans are refused from now on."""
        with self._db.writer.begin() as conn:
            conn.execute(
                update(agents)
                .where(agents.c.id == agent_id, agents.c.deleted_at.is_(None))
                .values(deleted_at=now)
            )
        with self._lock:
            self._loaded_at = 0.0  # this process sees it at once

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._loaded_at < _REFRESH_S:
            return
        with self._lock:
            if now - self._loaded_at < _REFRESH_S:
                return
            with self._db.reader.connect() as conn:
                rows = conn.execute(select(agents.c.id).where(agents.c.deleted_at.is_not(None)))
                self._deleted = frozenset(r.id for r in rows)
            self._loaded_at = now
