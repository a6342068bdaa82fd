"""`api.ports.ReadStore` and `api.ports.KeyStore` over the SQL tables."""

from __future__ import annotations

from collections.abc import Callable

from collector.agents import AgentDirectory
from collector.assembly.runs import Timers
from collector.storage.engine import Database, ping
from collector.storage.keys import KeyStore


class SqlReadStore:
    def __init__(
        self,
        db: Database,
        keys: KeyStore,
        directory: AgentDirectory,
        timers: Timers,
        clock: Callable[[], float],
    ) -> None:
        self._db = db
        self._keys = keys
        self._directory = directory
        self._timers = timers
        self._clock = clock

    def ready(self) -> bool:
        return ping(self._db)

    def owner_of(self, key: str) -> str | None:
        principal = self._keys.authenticate(key)
        return principal.owner if principal else None
