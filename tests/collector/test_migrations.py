"""The Alembic migrations produce exactly the schema `tables.py` declares."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from bench.support.servers import cli
from collector.runs.store import load_trace_facts
from collector.storage.engine import Database, open_database
from collector.storage.keys import KeyStore
from collector.storage.migrate import (
    HEAD,
    create_schema,
    current_revision,
    head_revision,
    upgrade,
)
from collector.storage.rows import SPAN_COLUMNS, resource_digest
from collector.storage.tables import metadata
from collector.storage.writes import write_batch
from tests.collector.span_rows import span_row


def test_migrated_schema_matches_the_table_definitions(empty_database_url: str) -> None:
    db = open_database(empty_database_url)
    create_schema(db)
    create_schema(db)  # idempotent: a second start changes nothing
    with db.reader.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    assert current_revision(db) == head_revision() is not None
    db.dispose()


def test_the_head_a_start_trusts_to_skip_alembic_is_alembics_head() -> None:
    assert head_revision() == HEAD


def test_a_start_on_a_database_behind_the_head_still_migrates_it(empty_database_url: str) -> None:
    db = open_database(empty_database_url)
    upgrade(db, "0017")
    create_schema(db)
    assert current_revision(db) == HEAD
    db.dispose()


def test_db_upgrade_command(empty_database_url: str) -> None:
    result = cli("db", "upgrade", "--database-url", empty_database_url)
    assert f"database at revision {head_revision()}" in result.stderr


def _start_after(barrier: Any, url: str, keys_made: Any) -> None:
    """What `serve` does first: migrate, then create the first key if none exists."""
    db = open_database(url)
    barrier.wait(30)
    create_schema(db)
    if KeyStore(db).create_first("local") is not None:
        keys_made.put(1)
    db.dispose()


@pytest.mark.timing
def test_processes_starting_together_migrate_one_after_the_other(empty_database_url: str) -> None:
    """Collectors started at once on one empty database all come up, and make ONE key."""
    context = multiprocessing.get_context("spawn")
    barrier, keys_made = context.Barrier(4), context.Queue()
    procs = [
        context.Process(target=_start_after, args=(barrier, empty_database_url, keys_made))
        for _ in range(4)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    db = open_database(empty_database_url)
    assert current_revision(db) == head_revision()
    assert len(KeyStore(db).list()) == 1
    assert keys_made.get(timeout=5) == 1 and keys_made.empty()
    db.dispose()


def _store_old_spans(
    db: Database, stored: list[tuple[str, str, str, float, bytes]], *, numbered: bool = False
) -> None:
    """Span rows as revisions 0002 and 0003 stored them: the resource's bytes
    inline; from 0003 on (`numbered`) with their trace's number."""
    old = [c for c in SPAN_COLUMNS if c != "key_id"]  # key_id came with 0018
    columns = [("resource" if c == "resource_digest" else c) for c in old]
    names, marks = ", ".join(columns), ", ".join(f":{c}" for c in columns)
    if numbered:
        names += ", trace_ref"
        marks += ", (SELECT id FROM traces WHERE owner = :o2 AND trace_id = :t2)"
    with db.writer.begin() as conn:
        for owner, trace_id, span_id, received_at, resource in stored:
            row = span_row(trace_id, span_id, owner=owner, received_at=received_at)
            values = dict(zip(columns, row[: len(old)], strict=True)) | {"resource": resource}
            if numbered:
                values |= {"o2": owner, "t2": trace_id}
            conn.execute(text(f"INSERT INTO spans ({names}) VALUES ({marks})"), values)


def test_upgrading_numbers_the_traces_of_spans_already_stored(empty_database_url: str) -> None:
    """0003 keys spans by trace number: spans stored before it stay readable."""
    db = open_database(empty_database_url)
    upgrade(db, "0002")
    names = ", ".join(SPAN_COLUMNS)
    _store_old_spans(
        db, [("o", "t1", "a", 5.0, b""), ("o", "t1", "b", 6.0, b""), ("o", "t2", "a", 1.0, b"")]
    )
    create_schema(db)
    with db.reader.connect() as conn:
        numbered = conn.execute(text("SELECT trace_id, id FROM traces ORDER BY id")).all()
        facts = load_trace_facts(db.session(conn), "o", ["t1", "t2"])
    assert [trace for trace, _ in numbered] == ["t2", "t1"]  # in order of first sight
    assert sorted(f.span_id for f in facts["t1"]) == ["a", "b"]
    assert [f.span_id for f in facts["t2"]] == ["a"]
    with db.writer.begin() as conn:  # a retried span is still a duplicate
        db.session(conn).register_traces([("o", "t1")], 7.0)
        row = conn.execute(text(f"SELECT {names} FROM spans WHERE span_id = 'a' LIMIT 1")).one()
        write_batch(db.session(conn), [], [tuple(row)])
    with db.reader.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM spans")).scalar_one() == 3
    db.dispose()


def test_upgrading_stores_each_distinct_resource_once(empty_database_url: str) -> None:
    """0004: the resource bytes inline in every span row move to `resources`."""
    db = open_database(empty_database_url)
    upgrade(db, "0003")
    with db.writer.begin() as conn:  # as 0003's writer numbered traces
        for trace_id in ("t1", "t2"):
            conn.execute(
                text("INSERT INTO traces (owner, trace_id, touched_at) VALUES ('o', :t, 1.0)"),
                {"t": trace_id},
            )
    r1, r2 = b"\n\x0bresource-one", b"\n\x0bresource-two"
    stored = [("o", "t1", "a", 5.0, r1), ("o", "t1", "b", 6.0, r1), ("o", "t2", "a", 7.0, r2)]
    _store_old_spans(db, stored, numbered=True)
    create_schema(db)
    with db.reader.connect() as conn:
        kept = conn.execute(text("SELECT digest, encoded, seen_at FROM resources")).all()
        pointers = conn.execute(
            text("SELECT span_id, trace_id, resource_digest FROM spans ORDER BY trace_id, span_id")
        ).all()
    assert sorted((bytes(e), s) for _, e, s in kept) == [(r1, 6.0), (r2, 7.0)]
    assert {bytes(e): bytes(d) for d, e, _ in kept} == {
        r1: resource_digest(r1),
        r2: resource_digest(r2),
    }
    assert [bytes(d) for _, _, d in pointers] == [resource_digest(r) for r in (r1, r1, r2)]
    db.dispose()
