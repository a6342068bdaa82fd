"""Shared test helpers: the reference data, and the two databases.

`database_url` is THE parametrised fixture: every test that takes it runs on
SQLite (a file in the test's temp dir) and on PostgreSQL (a fresh database in
one throwaway cluster per session, see bench/support/postgres.py). Its
database is already at the newest schema, a copy of one migrated once per
session; `empty_database_url` is the same without the copy, for the tests
of migrations and of a first start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.support.postgres import PostgresCluster
from tests.schemas import migrate_to_head, sqlite_copy_at_head

pytest_plugins = ["tests.cpu_use"]  # --cpu-use=N: the tests that used the most CPU

# The reference data the tests load: copies kept in the repository, so a
# clone stands alone; tests/test_fixtures.py checks them against the
# specification's originals in ../shared when that folder is present.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    with PostgresCluster() as cluster:
        yield cluster


DATABASES = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def postgres_at_head(postgres: PostgresCluster) -> str:
    """A template database at the newest schema (nothing stays connected to it);
    SQLite's counterpart is a file (tests/schemas.py)."""
    url = postgres.create_database()
    migrate_to_head(url)
    return url


def new_database(request: pytest.FixtureRequest, directory: Path, *, at_head: bool) -> str:
    """A database of the kind `request.param` names, at the newest schema or
    empty; returns its URL.

    A PostgreSQL one is dropped when its test (or module) is done: a few hundred
    kept to the end of the session came to gigabytes written, and deleted, at its
    end (issue 43)."""
    if request.param == "sqlite":
        path = directory / "collector.db"
        return sqlite_copy_at_head(path) if at_head else f"sqlite:///{path}"
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    template = request.getfixturevalue("postgres_at_head") if at_head else None
    url = cluster.create_database(template=template)
    request.addfinalizer(lambda: cluster.drop_database(url))
    return url


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return new_database(request, tmp_path, at_head=True)


@pytest.fixture(params=DATABASES)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database with no schema: what migrations and a first start begin from."""
    return new_database(request, tmp_path, at_head=False)


@pytest.fixture(scope="module", params=DATABASES)
def module_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The same, shared by a module's tests (hypothesis suites over one server)."""
    return new_database(request, tmp_path_factory.mktemp("db"), at_head=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadscope` (make test), with packages whose conftest holds a
    package-scoped fixture (a server and a browser) kept on one worker too."""
    if config.getvalue("dist") != "loadscope":
        return None
    from tests.xdist_scopes import SharedFixtureScopes

    return SharedFixtureScopes(config, log)
