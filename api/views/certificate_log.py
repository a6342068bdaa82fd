"""The certificate log, its signed head, a certificate's place in it, and the
public keys as a JWKS (CERTS.md sections 1 and 3). All keyless."""

from __future__ import annotations

import base64
import re
from typing import Any

from api.certificate_ports import CertificateDesk, LogEntry
from api.certificate_schemas import CertificateLog, CertificateStatus, LogEntryItem
from api.problems import NotFound
from api.render import rfc3339

DIGEST = re.compile(r"[0-9a-f]{64}")


def _item(entry: LogEntry) -> LogEntryItem:
    return LogEntryItem(
        n=entry.n,
        statement_digest=entry.statement_digest,
        kind=entry.kind,
        subject=entry.subject,
        issued_at=entry.issued_at,
        keyid=entry.kid,
        chain=entry.chain,
    )


def log_page(desk: CertificateDesk, after: int, limit: int) -> CertificateLog:
    entries, size = desk.log(after, limit)
    return CertificateLog(items=[_item(e) for e in entries], size=size)


def status(desk: CertificateDesk, statement_digest: str) -> CertificateStatus:
    """Whether a certificate is in the log, and whether a newer one replaced it."""
    found = desk.entry(statement_digest) if DIGEST.fullmatch(statement_digest) else None
    if found is None:
        raise NotFound("no certificate with this statement digest is in the log")
    entry, newer = found
    return CertificateStatus(entry=_item(entry), superseded_by=newer)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwks(desk: CertificateDesk) -> dict[str, Any]:
    """RFC 8037 JWKs of every key ever used, current first; retired ones say when."""
    keys: list[dict[str, Any]] = []
    for key in desk.public_keys():
        jwk: dict[str, Any] = {
            "kty": "OKP",
            "crv": "Ed25519",
            "x": _b64url(key.public_key),
            "kid": key.kid,
            "use": "sig",
            "alg": "EdDSA",
        }
        if key.retired_at is not None:
            jwk["badge:retired_at"] = rfc3339(key.retired_at)
        keys.append(jwk)
    return {"keys": keys}
