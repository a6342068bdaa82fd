"""The storage backend is chosen once: `open_database` picks SQLite or
PostgreSQL, and nothing else in the collector asks which one it has
(issue 31). The SQL that differs lives in `collector/storage/sqlite/` and
`collector/storage/postgresql/`, as methods of their sessions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from collector.storage.engine import open_database
from collector.storage.migrate import create_schema
from collector.storage.postgresql.session import PostgresSession
from collector.storage.session import SqlSession
from collector.storage.sqlite.session import SqliteSession

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("collector/storage/sqlite/", "collector/storage/postgresql/")
# Alembic migrations are history: each states the DDL of its revision for
# both databases, and is never changed after it shipped.
MIGRATIONS = "collector/migrations/"
ENGINE = "collector/storage/engine.py"


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / "collector").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        yield name, ast.parse(path.read_text(), name)


def imported(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_only_the_engine_imports_a_backend() -> None:
    importers = {
        name
        for name, tree in modules()
        if not name.startswith(BACKENDS)
        and any(
            m.startswith(("collector.storage.sqlite", "collector.storage.postgresql"))
            for m in imported(tree)
        )
    }
    assert importers == {ENGINE}


def test_no_module_outside_the_backends_asks_which_database_it_talks_to() -> None:
    """No `.dialect` (SQLAlchemy's or ours), no `conn.info` side channel."""
    asking: list[str] = []
    for name, tree in modules():
        if name.startswith((*BACKENDS, MIGRATIONS)) or name == ENGINE:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            logging = isinstance(node.value, ast.Name) and node.value.id in {"log", "logging"}
            if node.attr in {"dialect", "paramstyle"} or (node.attr == "info" and not logging):
                asking.append(f"{name}:{node.lineno} .{node.attr}")
    assert asking == []


def test_opening_a_database_gives_sessions_of_its_backend(database_url: str) -> None:
    expected: type[SqlSession] = (
        SqliteSession if database_url.startswith("sqlite") else PostgresSession
    )
    db = open_database(database_url)
    try:
        create_schema(db)
        with db.writing() as session:
            assert type(session) is expected
            session.register_traces([("o", "t")], 1.0)
        with db.reading() as session:
            assert type(session) is expected
            assert list(session.trace_numbers([("o", "t")])) == [("o", "t")]
    finally:
        db.dispose()
