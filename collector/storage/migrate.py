"""Bring a database to the newest schema with the Alembic migrations.

`serve` and every command call `upgrade()` on start; `badge-collector db
upgrade` does it alone. Runs on the collector's own write engine, so the
same URL and driver settings apply. Processes starting together on one
PostgreSQL database take turns (an advisory lock held by the transaction).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from collector.storage.engine import Database

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def create_schema(db: Database) -> None:
    """Migrate to the newest schema (Alembic; the first revision is the base)."""
    upgrade(db)


def upgrade(db: Database, revision: str = "head") -> None:
    config = _config()
    with db.writer.begin() as conn:
        db.session(conn).lock_for_setup()
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def current_revision(db: Database) -> str | None:
    with db.reader.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()
