"""Response models of the certificate, log, key and badge routes (docs/certificates.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Signature(BaseModel):
    keyid: str = Field(description="the signing key's kid (see /.well-known/jwks.json)")
    sig: str = Field(description="base64 Ed25519 signature over the DSSE PAE bytes")


class Envelope(BaseModel):
    """A DSSE envelope: what every certificate and the log head are."""

    payloadType: str = Field(  # noqa: N815 - DSSE's own field names
        description="application/vnd.in-toto+json (certificates) or "
        "application/vnd.badge-collector.log-head+json (the log head)"
    )
    payload: str = Field(description="base64 of the RFC 8785 statement bytes")
    signatures: list[Signature]


class LogEntryItem(BaseModel):
    n: int = Field(description="1-based position in the log")
    statement_digest: str
    kind: str = Field(description="run, screening or score")
    subject: str = Field(description="run:<id>, screening:<id> or agent:<id>")
    issued_at: str
    keyid: str = Field(description="the kid of the key that signed it")
    chain: str = Field(description="SHA-256(chain of n-1 + statement digest), hex")


class CertificateLog(BaseModel):
    items: list[LogEntryItem]
    size: int = Field(description="entries in the log")


class CertificateStatus(BaseModel):
    entry: LogEntryItem
    superseded_by: str | None = Field(
        description="the statement digest of the certificate that replaced it; null: current"
    )


class Jwk(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    kty: str
    crv: str
    x: str = Field(description="base64url raw public key, no padding")
    kid: str
    use: str
    alg: str
    retired_at: str | None = Field(
        default=None,
        alias="badge:retired_at",
        serialization_alias="badge:retired_at",
        description="RFC 3339 UTC; only on retired keys",
    )


class Jwks(BaseModel):
    keys: list[Jwk] = Field(description="every signing key ever used, the current one first")


class BadgeEndpoint(BaseModel):
    """The shields.io endpoint schema."""

    schemaVersion: int  # noqa: N815 - shields.io's own field name
    label: str
    message: str
    color: str = Field(description="hex without #")
