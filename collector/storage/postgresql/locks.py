"""PostgreSQL advisory locks, for the one-per-database roles: setup
(migrations and the first key; a transaction lock), the sweeper (a session
lock held by one process) and issuing certificates (a transaction lock).

Per-trace work does not use them: a 20,000-span batch can touch thousands of
traces, and advisory locks live in the bounded shared lock table while row
locks live in the rows (storage/postgresql/session.py).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import text
from sqlalchemy.engine import Connection

SETUP_LOCK: Final = 0x6261646765_01  # "badge" 1
SWEEPER_LOCK: Final = 0x6261646765_02
CERTIFICATES_LOCK: Final = 0x6261646765_03


def lock_for_setup(conn: Connection) -> None:
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SETUP_LOCK})


def lock_certificates(conn: Connection) -> None:
    """Issuing a certificate and appending it to the log (a transaction lock):
    rare next to span writes, and one lock for all of them keeps the chain one."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CERTIFICATES_LOCK})


def try_advisory_lock(conn: Connection, key: int) -> bool:
    """Take a session lock if free (held until unlocked or the connection ends)."""
    return bool(conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar())


def advisory_unlock(conn: Connection, key: int) -> None:
    conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
