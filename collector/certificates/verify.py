"""What `badge-collector verify` checks of a certificate (CERTS.md section 4).

Offline, against the keys of a JWKS: the envelope's shape, the key its
`keyid` names, the Ed25519 signature over the PAE bytes, the statement's
shape and RFC 8785 form, and the subject digest against the predicate. A
log head (CERTS.md section 3) is checked the same way, up to its payload.
`Unusable` input (exit 2) is not a certificate at all; an `Invalid` one
(exit 1) is a certificate that fails a check, and says which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collector.certificates.canonical import canonical_json, sha256_hex
from collector.certificates.dsse import (
    HEAD_TYPE,
    STATEMENT_TYPE,
    BadEncoding,
    NotAnEnvelope,
    decoded,
    pae,
    shape_of,
)
from collector.certificates.keys import BadKey, public_from_jwk, verifies
from collector.certificates.statements import HEAD_V1, KIND_OF_TYPE, STATEMENT_V1, subject_digest

RETIRED_AT = "badge:retired_at"  # CERTS.md section 1: on retired keys of the JWKS


class Unusable(Exception):
    """Not something verify can check: not JSON, not an envelope, no keys (exit 2)."""


class Invalid(Exception):
    """A certificate that fails a check (exit 1); the message is the reason."""


@dataclass(frozen=True, slots=True)
class Verified:
    kind: str  # run, screening, score, or log-head
    subject: str  # the subject's name; for a head, `log`
    statement_digest: str  # SHA-256 of the payload
    kid: str
    retired_at: str | None  # the key's, when the JWKS says it is retired
    body: Mapping[str, Any]  # the predicate; for a head, its payload


def keys_of(jwks: Any) -> dict[str, Mapping[str, Any]]:
    """The JWKS's keys by kid; Unusable when it is not a JWKS."""
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        raise Unusable('the keys are not a JWKS ({"keys": [...]})')
    found: dict[str, Mapping[str, Any]] = {}
    for jwk in jwks["keys"]:
        if isinstance(jwk, dict) and isinstance(jwk.get("kid"), str):
            found[jwk["kid"]] = jwk
    return found


def verify(data: bytes, jwks: Any) -> Verified:
    """Check an envelope's bytes against a JWKS (a parsed JSON value)."""
    try:
        envelope = decoded(shape_of(data))
    except NotAnEnvelope as exc:
        raise Unusable(str(exc)) from None
    except BadEncoding as exc:
        raise Invalid(str(exc)) from None
    keys = keys_of(jwks)
    message = pae(envelope.payload_type, envelope.payload)
    checked: list[str] = []
    for signature in envelope.signatures:
        jwk = keys.get(signature.keyid)
        if jwk is None:
            checked.append(f"unknown key {signature.keyid!r}")
            continue
        try:
            public = public_from_jwk(jwk)
        except BadKey as exc:
            raise Unusable(f"key {signature.keyid} in the JWKS: {exc}") from None
        if not verifies(public, signature.sig, message):
            checked.append(f"bad signature by key {signature.keyid}")
            continue
        retired = jwk.get(RETIRED_AT)
        return _content(envelope.payload_type, envelope.payload, signature.keyid, retired)
    raise Invalid("; ".join(checked))


def _content(payload_type: str, payload: bytes, kid: str, retired: Any) -> Verified:
    try:
        parsed = json.loads(payload)
    except (UnicodeDecodeError, ValueError):
        raise Invalid("the payload is not JSON") from None
    try:
        canonical = canonical_json(parsed)
    except Exception:
        raise Invalid("the payload cannot be put in RFC 8785 form") from None
    if canonical != payload:
        raise Invalid("the payload is not in RFC 8785 canonical form")
    retired_at = retired if isinstance(retired, str) else None
    digest = sha256_hex(payload)
    if payload_type == HEAD_TYPE:
        if not isinstance(parsed, dict) or parsed.get("_type") != HEAD_V1:
            raise Invalid("a log head whose payload is not a log-head v1")
        return Verified("log-head", "log", digest, kid, retired_at, parsed)
    if payload_type != STATEMENT_TYPE:
        raise Invalid(f"unknown payloadType {payload_type!r}")
    kind, subject, predicate, claimed = _statement(parsed)
    if subject_digest(predicate) != claimed:
        raise Invalid("the subject digest does not match the predicate")
    return Verified(kind, subject, digest, kid, retired_at, predicate)


def _statement(parsed: Any) -> tuple[str, str, Mapping[str, Any], str]:
    """(kind, subject name, predicate, claimed subject digest) of a statement."""
    if not isinstance(parsed, dict) or parsed.get("_type") != STATEMENT_V1:
        raise Invalid("the payload is not an in-toto Statement v1")
    kind = KIND_OF_TYPE.get(parsed.get("predicateType"))  # type: ignore[arg-type]
    if kind is None:
        raise Invalid(f"unknown predicateType {parsed.get('predicateType')!r}")
    subjects, predicate = parsed.get("subject"), parsed.get("predicate")
    if not isinstance(subjects, list) or len(subjects) != 1 or not isinstance(subjects[0], dict):
        raise Invalid("a statement names one subject")
    name, digest = subjects[0].get("name"), subjects[0].get("digest")
    if not isinstance(name, str) or not isinstance(digest, dict):
        raise Invalid("the subject has no name or digest")
    claimed = digest.get("sha256")
    if not isinstance(claimed, str) or not isinstance(predicate, dict):
        raise Invalid("the subject has no sha256 digest, or the predicate is not an object")
    for field in ("issued_at", "collector", "supersedes"):
        if field not in predicate:
            raise Invalid(f"the predicate has no {field!r}")
    return kind, name, predicate, claimed
