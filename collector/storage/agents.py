"""Which agents exist and which are deleted: the check ingest makes per request."""

from __future__ import annotations

import threading
import time

from sqlalchemy import func, select, update

from collector.storage.engine import Database
from collector.storage.tables import agents
from collector.types import Clock

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
        # owner -> (live agents stored, when counted, new agents admitted since)
        self._owners: dict[str, tuple[int, float, set[str]]] = {}

    def admissible(self, owner: str, new: set[str], limit: int) -> set[str]:
        """Which of an owner's new agents it may still add under `limit`.

        One key created 100,000 agents in ten exports (one service.name per
        resource), and every keyless page then slowed with them (issue 29).
        The count is the database's, read every `_REFRESH_S`, plus what this
        process admitted since: with several processes the bound can be
        passed by what they admit within that time, no more."""
        if not new:
            return new
        now = time.monotonic()
        with self._lock:
            stored, counted_at, added = self._owners.get(owner, (0, -_REFRESH_S, set()))
            if now - counted_at >= _REFRESH_S:
                with self._db.reader.connect() as conn:
                    stored = conn.execute(
                        select(func.count())
                        .select_from(agents)
                        .where(agents.c.owner == owner, agents.c.deleted_at.is_(None))
                    ).scalar_one()
                counted_at, added = now, set()
            fresh = sorted(new - added)
            room = max(0, limit - stored - len(added))
            allowed = set(fresh[:room]) | (new & added)
            added |= allowed
            self._owners[owner] = (stored, counted_at, added)
        return allowed

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


class AgentRemoval:
    """api.ports.AgentWrites: the owner deletes an agent, at the collector's clock.

    Apart from the read store, so what only reads cannot delete; through the
    directory, so this process refuses the agent's spans at once."""

    def __init__(self, directory: AgentDirectory, clock: Clock) -> None:
        self._directory = directory
        self._clock = clock

    def delete_agent(self, agent_id: str) -> None:
        self._directory.delete(agent_id, self._clock())
