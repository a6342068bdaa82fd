"""`api.certificate_ports.CertificateDesk` over the SQL tables (CERTS.md section 3).

A subject's content is compared with its current certificate by subject
digest; only a changed one is signed. Issuing happens in one transaction
that holds the certificates lock (a session's `lock_certificates`: an
advisory lock on PostgreSQL, the write lock on SQLite) and re-reads the
subject's current certificate under it, so two collectors asked for the
same subject at once issue one certificate, and every append extends the
one chain (the primary key on the entry number backs it up). Rows are never
updated or deleted (migration 0018's triggers refuse it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from api.certificate_ports import Certificate, CertificateRequest, LogEntry, PublicKey
from api.problems import Unavailable
from api.render import rfc3339
from collector.certificates.canonical import json_ready
from collector.certificates.dsse import HEAD_TYPE, STATEMENT_TYPE, seal
from collector.certificates.keyfile import KeyFile
from collector.certificates.keys import SigningKey
from collector.certificates.statements import (
    ZERO_CHAIN,
    Stamp,
    head_payload,
    next_chain,
    statement,
)
from collector.storage import certificate_rows as rows
from collector.storage.certificate_reads import answered
from collector.storage.engine import Database
from collector.storage.session import SqlSession
from collector.storage.tables import certificate_log, certificates, signing_keys

NO_KEY = (
    "certificates need a signing key: start the collector with --signing-key FILE "
    "(or BADGE_SIGNING_KEY=FILE), a PEM Ed25519 key every collector process shares; "
    "`badge-collector signing-key rotate --signing-key FILE` creates one"
)


@dataclass(frozen=True)
class Signing:
    """What issuing needs besides the database: the key, and what every
    predicate's `collector` says (the package version, and the conventions
    digest of CONVENTIONS.md section 4)."""

    keys: KeyFile
    conventions: str
    version: str


class SqlCertificateDesk:
    """Signs with `signing`'s key (None: no key, and every signing call is
    refused with NO_KEY, as the CLI's read side and PostgreSQL without
    --signing-key are)."""

    def __init__(self, db: Database, signing: Signing | None, clock: Callable[[], float]) -> None:
        self._db = db
        self._keys = signing.keys if signing is not None else None
        self._conventions = signing.conventions if signing is not None else ""
        self._version = signing.version if signing is not None else ""
        self._clock = clock

    def register_key(self) -> str | None:
        """Record the current key's public half (at start: the JWKS lists it
        before any certificate). Returns why it cannot sign, if it cannot."""
        if self._keys is None:
            return NO_KEY
        try:
            with answered(), self._db.writer.begin() as conn:
                self._usable(self._db.session(conn), self._keys.current())
        except Unavailable as exc:
            return exc.detail
        return None

    def _usable(self, session: SqlSession, key: SigningKey) -> SigningKey:
        """The key, recorded as used; Unavailable when it was retired (a
        rotated key must not come back into use by a stale file)."""
        known, retired_at = rows.key_state(session, key.kid)
        if not known:
            row_values = (key.kid, key.public_raw, self._clock(), None)
            columns = ("kid", "public_key", "created_at", "retired_at")
            session.insert_ignore_rows(signing_keys, columns, [row_values])
        elif retired_at is not None:
            where = self._keys.path if self._keys is not None else "memory"
            raise Unavailable(
                f"the signing key in {where} (kid {key.kid}) was retired at "
                f"{rfc3339(retired_at)}: point --signing-key at the current key"
            )
        return key

    def _key_or_refuse(self) -> KeyFile:
        if self._keys is None:
            raise Unavailable(NO_KEY)
        return self._keys

    def newest(self, agent_id: str, subjects: Sequence[str]) -> dict[str, Certificate]:
        with answered(), self._db.reading() as session:
            return rows.newest(session, agent_id, subjects)

    def issue(self, request: CertificateRequest, current: Certificate | None) -> Certificate:
        content = json_ready(request.content)
        stamp = Stamp(rfc3339(self._clock()) or "", self._version, self._conventions, None)
        made = statement(request.kind, request.subject, content, stamp)
        digest = made.subject_digest
        if current is not None and current.subject_digest == digest:
            return current
        keys = self._key_or_refuse()
        with answered(), self._db.writer.begin() as conn:
            session = self._db.session(conn)
            session.lock_certificates()
            current = rows.current(session, request.agent_id, request.subject)
            if current is not None and current.subject_digest == digest:
                return current  # another process issued it meanwhile
            key = self._usable(session, keys.current())
            supersedes = current.statement_digest if current is not None else None
            if supersedes is not None:  # the statement names the one it replaces
                stamp = Stamp(stamp.issued_at, stamp.version, stamp.conventions, supersedes)
                made = statement(request.kind, request.subject, content, stamp)
            issued = Certificate(
                kind=request.kind,
                subject=request.subject,
                agent_id=request.agent_id,
                statement_digest=made.digest,
                subject_digest=digest,
                basis=request.basis,
                supersedes=supersedes,
                issued_at=stamp.issued_at,
                kid=key.kid,
                envelope=seal(STATEMENT_TYPE, made.payload, key),
            )
            n, chain = rows.last_entry(session) or (0, ZERO_CHAIN)
            rows.append(session, issued, n + 1, next_chain(chain, issued.statement_digest))
        return issued

    def entry(self, statement_digest: str) -> tuple[LogEntry, str | None] | None:
        log = certificate_log.c
        with answered(), self._db.reader.connect() as conn:
            row = conn.execute(
                select(certificate_log).where(log.statement_digest == statement_digest)
            ).first()
            if row is None:
                return None
            newer = conn.execute(
                select(certificates.c.statement_digest).where(
                    certificates.c.supersedes == statement_digest
                )
            ).scalar()
        return _entry(row), newer

    def log(self, after: int, limit: int) -> tuple[list[LogEntry], int]:
        log = certificate_log.c
        with answered(), self._db.reader.connect() as conn:
            rows = conn.execute(
                select(certificate_log).where(log.n > after).order_by(log.n).limit(limit)
            ).all()
            size = conn.execute(select(func.max(log.n))).scalar()
        return [_entry(r) for r in rows], int(size or 0)

    def head(self) -> bytes:
        keys = self._key_or_refuse()
        log = certificate_log.c
        with answered(), self._db.writer.begin() as conn:
            session = self._db.session(conn)
            last = conn.execute(select(log.n, log.chain).order_by(log.n.desc()).limit(1)).first()
            key = self._usable(session, keys.current())
        size, chain = (int(last.n), str(last.chain)) if last is not None else (0, ZERO_CHAIN)
        payload = head_payload(size, chain, rfc3339(self._clock()) or "")
        return seal(HEAD_TYPE, payload, key)

    def public_keys(self) -> list[PublicKey]:
        with answered(), self._db.reader.connect() as conn:
            rows = conn.execute(select(signing_keys)).all()
        current = self._keys.current().kid if self._keys is not None else None
        found = [PublicKey(r.kid, bytes(r.public_key), r.created_at, r.retired_at) for r in rows]
        # The key this collector signs with first, then unretired ones, newest first.
        found.sort(key=lambda k: (k.kid != current, k.retired_at is not None, -k.created_at))
        return found


@contextmanager
def recording_rotation(
    db: Database, old: SigningKey | None, new: SigningKey, now: float
) -> Iterator[None]:
    """A transaction that records `new` as used and `old` as retired now
    (`badge-collector signing-key rotate`); the caller replaces the key file
    inside it, so a failure on either side leaves both as they were."""
    with db.writer.begin() as conn:
        session = db.session(conn)
        columns = ("kid", "public_key", "created_at", "retired_at")
        rows: list[tuple[str, bytes, float, float | None]] = [(new.kid, new.public_raw, now, None)]
        if old is not None:
            rows.append((old.kid, old.public_raw, now, now))
        session.insert_ignore_rows(signing_keys, columns, rows)
        if old is not None:
            session.execute(
                signing_keys.update()
                .where(signing_keys.c.kid == old.kid, signing_keys.c.retired_at.is_(None))
                .values(retired_at=now)
            )
        yield


def _entry(row: Any) -> LogEntry:
    return LogEntry(
        n=int(row.n),
        statement_digest=row.statement_digest,
        kind=row.kind,
        subject=row.subject,
        issued_at=row.issued_at,
        kid=row.kid,
        chain=row.chain,
    )
