"""The dialect's bulk writes, small (executemany) and large (PostgreSQL: COPY)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from collector.storage.engine import open_database
from collector.storage.migrate import create_schema
from collector.storage.tables import agents, keys, spans, traces
from collector.storage.writes import write_batch
from tests.collector.span_rows import span_row


def agent_row(i: int, name: str | None = None) -> tuple[Any, ...]:
    return (f"id-{i:04d}", "owner", name or f"agent-{i}", float(i))


@pytest.mark.parametrize("size", [5, 200])  # below and above the COPY threshold
def test_insert_ignore_keeps_first_of_duplicates_and_existing_rows(
    database_url: str, size: int
) -> None:
    db = open_database(database_url)
    create_schema(db)
    columns = ("id", "owner", "name", "first_seen_at")
    with db.writing() as session:
        session.insert_ignore_rows(agents, columns, [agent_row(0, "kept")])
    batch = [agent_row(i) for i in range(size)] + [agent_row(1, "second copy")]
    with db.writing() as session:
        session.insert_ignore_rows(agents, columns, batch)
    with db.reading() as session:
        stored = dict(session.execute(select(agents.c.id, agents.c.name)).all())
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

    with db.writing() as session:
        session.upsert_rows(keys, columns, [row(0, "agent")], key=("id",))
    batch = [row(i, "grader") for i in range(size)] + [row(0, "agent", 9.5)]
    with db.writing() as session:
        session.upsert_rows(keys, columns, batch, key=("id",))
    with db.reading() as session:
        stored = {r.id: r for r in session.execute(select(keys))}
    assert len(stored) == size
    assert (stored[1].role, stored[1].revoked_at) == ("agent", 9.5)
    assert all(stored[i + 1].role == "grader" for i in range(1, size))
    db.dispose()


def numbered(trace: int, span: int, name: str) -> tuple[object, ...]:
    return span_row(f"{trace:032x}", f"{span:016x}", name=name)


@pytest.mark.parametrize("size", [5, 200])
def test_spans_are_keyed_by_their_trace_number_and_stored_once(
    database_url: str, size: int
) -> None:
    db = open_database(database_url)
    create_schema(db)
    batch = [numbered(i % 7, i, "first") for i in range(size)] + [numbered(1, 1, "retry")]
    with db.writing() as session:
        session.register_traces({("o", row[1]) for row in batch}, 1.0)
        write_batch(session, [], batch)
        write_batch(session, [], [numbered(2, 2, "retry")])
    with db.reading() as session:
        stored = session.execute(
            select(spans.c.span_id, spans.c.name, traces.c.trace_id).join(
                traces, traces.c.id == spans.c.trace_ref
            )
        ).all()
    assert len(stored) == size
    assert {name for _, name, _ in stored} == {"first"}
    assert all(int(trace, 16) == int(span, 16) % 7 for span, _, trace in stored)
    db.dispose()


@pytest.mark.parametrize("size", [5, 200])
def test_spans_of_an_unregistered_trace_are_refused_not_dropped(
    database_url: str, size: int
) -> None:
    db = open_database(database_url)
    create_schema(db)
    # The driver's own error (the hot path uses its cursor): NOT NULL on trace_ref.
    with pytest.raises(Exception, match=r"(?i)not.null"), db.writing() as session:
        write_batch(session, [], [numbered(1, i, "lost?") for i in range(size)])
    db.dispose()


@pytest.mark.parametrize("size", [5, 200])
def test_a_graders_span_takes_the_place_of_another_keys_and_is_never_replaced(
    database_url: str, size: int
) -> None:
    """docs/runs.md "Runs a grader recorded": in a batch and across batches,
    whichever came first, the grader's span of an identity is the one stored,
    and the trace's count of grader spans says so."""
    db = open_database(database_url)
    create_schema(db)

    def one(span: int, name: str, grader: bool) -> tuple[object, ...]:
        return span_row(f"{1:032x}", f"{span:016x}", name=name, grader=grader)

    earlier = [one(1, "graded", True), one(2, "agent's", False)]
    batch = [one(100 + i, "filler", False) for i in range(size)]
    batch += [one(1, "forged", False), one(2, "graded", True), one(2, "forged again", False)]
    batch += [one(3, "agent's", False), one(3, "graded", True), one(3, "graded retry", True)]
    with db.writing() as session:
        session.register_traces({("o", f"{1:032x}")}, 1.0)
        write_batch(session, [], earlier)
        write_batch(session, [], batch)
    with db.reading() as session:
        stored = dict(session.execute(select(spans.c.span_id, spans.c.name)).all())
        number = session.trace_numbers([("o", f"{1:032x}")])[("o", f"{1:032x}")]
        graders = session.count_grader_spans_by_number([number])
    assert [stored[f"{i:016x}"] for i in (1, 2, 3)] == ["graded"] * 3
    assert len(stored) == size + 3 and graders == {number: 3}
    db.dispose()
