"""PostgreSQL's hold_runs inserts a placeholder run row (and deletes it) so a
grade and a new run of it, committed at once by two processes, wait for each
other (collector/storage/postgresql/session.py). The placeholder must fill
every NOT NULL column of `runs`: its column list was typed by hand, so a new
NOT NULL run column would have failed there only, on PostgreSQL alone."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, MetaData, String, Table, inspect, text

from bench.support.postgres import PostgresCluster
from collector.storage.engine import open_database
from collector.storage.migrate import create_schema
from collector.storage.postgresql.session import HELD_ROW, held_row
from collector.storage.rows import RUN_KINDS
from collector.storage.tables import run_columns


def test_the_placeholder_fills_every_not_null_column_of_the_migrated_runs_table(
    postgres: PostgresCluster,
) -> None:
    db = open_database(postgres.create_database())
    try:
        create_schema(db)
        with db.reader.connect() as conn:
            stored: list[dict[str, Any]] = inspect(conn).get_columns("runs")
        required = {
            c["name"]
            for c in stored
            if not c["nullable"] and c["default"] is None and c.get("autoincrement") is not True
        }
        required.discard("seq")  # the row number: an identity the database fills
        assert set(HELD_ROW[0]) == required
        with db.writing() as session:  # and it runs: nothing left behind, nothing counted
            session.hold_runs(["00000000-0000-0000-0000-00000000000a", "b", "a"])
            assert session.execute(text("SELECT count(*) FROM runs")).scalar_one() == 0
        with db.reader.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM run_deltas")).scalar_one() == 0
    finally:
        db.dispose()


def test_a_new_not_null_run_column_is_in_the_placeholder_by_its_kind() -> None:
    grown = Table(
        "runs",
        MetaData(),
        Column("seq", Integer, primary_key=True, autoincrement=True),
        *run_columns(),
        Column("retries", Integer, nullable=False),
        Column("region", String(16), nullable=False),
        Column("note", String(16)),  # nullable: left to NULL
    )
    columns, values = held_row(grown, {**RUN_KINDS, "retries": "int", "region": "word"})
    placed = dict(zip(columns, values, strict=True))
    assert (placed["retries"], placed["region"]) == ("0", "''")
    assert "note" not in placed
    assert columns[: len(HELD_ROW[0])] == HELD_ROW[0]
