"""Agent identity (RUNS.md "Identity") and the deleted-agent check at ingest."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from collector.storage.engine import Database
from collector.storage.tables import agents

AGENT_NAMESPACE = uuid.UUID("b1c4e0f2-7a55-5d0b-8f3e-2c9a6d41e7b8")
_REFRESH_S = 2.0


def agent_name(resource: Mapping[str, Any]) -> str:
    for key in ("badge.agent.id", "service.name"):
        value = resource.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown_service"


def agent_id(owner: str, name: str) -> str:
    """Stable, so every process and every restart gives an agent the same id."""
    return str(uuid.uuid5(AGENT_NAMESPACE, f"{owner}\x00{name}"))


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

    def forget_deleted_cache(self) -> None:
        with self._lock:
            self._loaded_at = 0.0

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
