"""Bring a database to the newest schema with the Alembic migrations.

`serve` and every command call `upgrade()` on start; `badge-collector db
upgrade` does it alone. Runs on the collector's own write engine, so the
same URL and driver settings apply. Processes starting together on one
PostgreSQL database take turns (an advisory lock held by the transaction).

Alembic is imported only when a database is not at HEAD already: importing
it cost every command and server start about 0.1 s of CPU (issue 43), to
learn that there was nothing to do.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from collector.storage.engine import Database

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"

# The newest revision in migrations/versions; a new migration changes it
# (tests/collector/test_migrations.py holds it to Alembic's head).
HEAD = "0024"


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def create_schema(db: Database) -> None:
    """Migrate to the newest schema (Alembic; the first revision is the base)."""
    if _stored_revision(db) == HEAD:
        log.info("schema at revision %s: nothing to migrate", HEAD)
        return
    upgrade(db)


def _stored_revision(db: Database) -> str | None:
    """The revision Alembic's own table records, read without Alembic; None where
    it cannot be read (no table yet, the database down), so that Alembic's
    upgrade decides, and reports what is wrong, as it did before."""
    try:
        with db.reader.connect() as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except DBAPIError:
        return None
    return str(rows[0][0]) if len(rows) == 1 else None


def upgrade(db: Database, revision: str = "head") -> None:
    from alembic import command

    config = _config()
    with db.writer.begin() as conn:
        db.session(conn).lock_for_setup()
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def current_revision(db: Database) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with db.reader.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config()).get_current_head()
