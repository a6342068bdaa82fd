"""The SQL of issuing a certificate, on the DB-API cursor.

Issuing runs about ten statements; through SQLAlchemy Core each cost more
than the statement itself (bench/certificates.py: the Core versions took a
run certificate past 2 ms of CPU). Rows cross as named `Certificate`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from api.certificate_ports import Certificate
from collector.storage.session import SqlSession, in_chunks

COLUMNS: Final = (
    "statement_digest",
    "kind",
    "subject",
    "agent_id",
    "subject_digest",
    "basis",
    "supersedes",
    "issued_at",
    "kid",
    "envelope",
)
_SELECT: Final = f"SELECT {', '.join(COLUMNS)} FROM certificates"


def _certificate(row: Sequence[Any]) -> Certificate:
    values = dict(zip(COLUMNS, row, strict=True))
    values["envelope"] = str(values["envelope"]).encode()
    return Certificate(**values)


def newest(session: SqlSession, agent_id: str, subjects: Sequence[str]) -> dict[str, Certificate]:
    """Each subject's newest certificate (ix_certificates_subject)."""
    found: dict[str, Certificate] = {}
    cur = session.cursor()
    mark = session.mark
    for chunk in in_chunks(sorted(set(subjects))):
        cur.execute(
            f"{_SELECT} WHERE agent_id = {mark} AND subject IN ({session.marks(len(chunk))}) "
            "ORDER BY id",
            (agent_id, *chunk),
        )
        for row in cur.fetchall():
            found[row[2]] = _certificate(row)
    return found


def current(session: SqlSession, agent_id: str, subject: str) -> Certificate | None:
    mark = session.mark
    cur = session.cursor()
    cur.execute(
        f"{_SELECT} WHERE agent_id = {mark} AND subject = {mark} ORDER BY id DESC LIMIT 1",
        (agent_id, subject),
    )
    row = cur.fetchone()
    return _certificate(row) if row is not None else None


def key_state(session: SqlSession, kid: str) -> tuple[bool, float | None]:
    """(known, retired_at) of a signing key."""
    cur = session.cursor()
    cur.execute(f"SELECT retired_at FROM signing_keys WHERE kid = {session.mark}", (kid,))
    row = cur.fetchone()
    return (False, None) if row is None else (True, row[0])


def last_entry(session: SqlSession) -> tuple[int, str] | None:
    cur = session.cursor()
    cur.execute("SELECT n, chain FROM certificate_log ORDER BY n DESC LIMIT 1")
    row = cur.fetchone()
    return (int(row[0]), str(row[1])) if row is not None else None


def append(session: SqlSession, issued: Certificate, n: int, chain: str) -> None:
    """The certificate, and its log entry `n` with its chain."""
    values = [getattr(issued, name) for name in COLUMNS]
    values[COLUMNS.index("envelope")] = issued.envelope.decode()
    cur = session.cursor()
    cur.execute(
        f"INSERT INTO certificates ({', '.join(COLUMNS)}) VALUES ({session.marks(len(COLUMNS))})",
        tuple(values),
    )
    cur.execute(
        "INSERT INTO certificate_log (n, statement_digest, kind, subject, issued_at, kid, chain) "
        f"VALUES ({session.marks(7)})",
        (
            n,
            issued.statement_digest,
            issued.kind,
            issued.subject,
            issued.issued_at,
            issued.kid,
            chain,
        ),
    )
