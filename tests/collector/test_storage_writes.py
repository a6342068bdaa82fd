"""The dialect's bulk writes, small (executemany) and large (PostgreSQL: COPY)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from collector.storage.dialect import insert_ignore_rows, upsert_rows
from collector.storage.engine import create_schema, open_database
from collector.storage.tables import agents, keys


def agent_row(i: int, name: str | None = None) -> tuple[Any, ...]:
    return (f"id-{i:04d}", "owner", name or f"agent-{i}", float(i))


@pytest.mark.parametrize("size", [5, 200])  # below and above the COPY threshold
def test_insert_ignore_keeps_first_of_duplicates_and_existing_rows(
    database_url: str, size: int
) -> None:
    db = open_database(database_url)
    create_schema(db)
    columns = ("id", "owner", "name", "first_seen_at")
    with db.writer.begin() as conn:
        insert_ignore_rows(conn, agents, columns, [agent_row(0, "kept")])
    batch = [agent_row(i) for i in range(size)] + [agent_row(1, "second copy")]
    with db.writer.begin() as conn:
        insert_ignore_rows(conn, agents, columns, batch)
    with db.reader.connect() as conn:
        stored = dict(conn.execute(select(agents.c.id, agents.c.name)).all())
    assert len(stored) == size
    assert stored["id-0000"] == "kept" and stored["id-0001"] == "agent-1"
    db.dispose()


@pytest.mark.parametrize("size", [5, 200])
def test_upsert_overwrites_and_the_last_duplicate_wins(database_url: str, size: int) -> None:
    db = open_database(database_url)
    create_schema(db)
    columns = ("id", "owner", "role", "key_hash", "prefix", "created_at", "revoked_at")

    def row(i: int, role: str, revoked: float | None = None) -> tuple[Any, ...]:
        return (i + 1, "o", role, f"hash-{i}", "bdg_x", 1.0, revoked)

    with db.writer.begin() as conn:
        upsert_rows(conn, keys, columns, [row(0, "agent")], key=("id",))
    batch = [row(i, "grader") for i in range(size)] + [row(0, "agent", 9.5)]
    with db.writer.begin() as conn:
        upsert_rows(conn, keys, columns, batch, key=("id",))
    with db.reader.connect() as conn:
        stored = {r.id: r for r in conn.execute(select(keys))}
    assert len(stored) == size
    assert (stored[1].role, stored[1].revoked_at) == ("agent", 9.5)
    assert all(stored[i + 1].role == "grader" for i in range(1, size))
    db.dispose()
