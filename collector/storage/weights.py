"""Each owner's radar weights: saved, read back, deleted (one row per owner).

A save is committed before it is answered, like every other write.
"""

from __future__ import annotations

import json
import time

from sqlalchemy import delete, select

from collector.storage.engine import Database
from collector.storage.tables import radar_weights


class SqlWeightStore:
    """`api.ports.WeightStore` over the `radar_weights` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def radar_weights(self, owner: str) -> dict[str, float] | None:
        with self._db.reader.connect() as conn:
            saved = conn.execute(
                select(radar_weights.c.weights).where(radar_weights.c.owner == owner)
            ).scalar()
        if saved is None:
            return None
        weights: dict[str, float] = json.loads(saved)
        return weights

    def save_radar_weights(self, owner: str, weights: dict[str, float]) -> None:
        row = (owner, json.dumps(weights, sort_keys=True), time.time())
        with self._db.writer.begin() as conn:  # no key lookups: no key-tail catch-up
            self._db.session(conn).upsert_rows(
                radar_weights, ("owner", "weights", "updated_at"), [row], ("owner",)
            )

    def delete_radar_weights(self, owner: str) -> None:
        with self._db.writer.begin() as conn:
            conn.execute(delete(radar_weights).where(radar_weights.c.owner == owner))
