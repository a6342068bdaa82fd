"""A second, independent reading of CERTS.md: what a stranger holding only the
specification would check, written without looking at the project's
verifier, canonicaliser or the other certificate tests' helpers.

Nothing from `collector.certificates` (or `tests.integration.certificates`'
checks) is imported: the PAE is spelled out here, signatures are checked
with `cryptography`'s Ed25519, canonical bytes come from `rfc8785`, the
spans digest is computed from the spans the test itself sent. Each check
names the CERTS.md section it reads.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

IN_TOTO = "application/vnd.in-toto+json"
HEAD = "application/vnd.badge-collector.log-head+json"
STATEMENT_V1 = "https://in-toto.io/Statement/v1"
PREDICATE_TYPES = {
    "run": "urn:badge-collector:run:v1",
    "screening": "urn:badge-collector:screening:v1",
    "score": "urn:badge-collector:score:v1",
}
# RFC 3339, UTC: "Z" or "+00:00" (section 1 for retired_at, section 2 for issued_at)
UTC_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


class SpecViolation(AssertionError):
    """A certificate that a verifier written from CERTS.md refuses."""


def dsse_pae(payload_type: str, payload: bytes) -> bytes:
    """Section 2: "DSSEv1" SP len(type) SP type SP len(payload) SP payload."""
    kind = payload_type.encode("utf-8")
    return (
        b"DSSEv1 "
        + str(len(kind)).encode("ascii")
        + b" "
        + kind
        + b" "
        + str(len(payload)).encode("ascii")
        + b" "
        + payload
    )


def unbase64url(text: str) -> bytes:
    if "=" in text:
        raise SpecViolation(f"a JWK's x must be base64url without padding: {text!r}")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def kid_of_raw(raw: bytes) -> str:
    """Section 1: the first 16 hex characters of the SHA-256 of the raw public key."""
    return hashlib.sha256(raw).hexdigest()[:16]


def check_jwks(document: Any) -> dict[str, tuple[Ed25519PublicKey, dict[str, Any]]]:
    """Section 1: `{"keys": [JWK, ...]}`, each an RFC 8037 OKP Ed25519 key whose
    kid is derived from x; retired ones carry badge:retired_at. By kid."""
    if set(document) != {"keys"} or not isinstance(document["keys"], list):
        raise SpecViolation(f"not a JWKS: {document!r}")
    found: dict[str, tuple[Ed25519PublicKey, dict[str, Any]]] = {}
    for jwk in document["keys"]:
        fixed = {"kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA"}
        if {k: jwk.get(k) for k in fixed} != fixed:
            raise SpecViolation(f"not an RFC 8037 Ed25519 signing JWK: {jwk!r}")
        allowed = {*fixed, "x", "kid", "badge:retired_at"}
        if not set(jwk) <= allowed:
            raise SpecViolation(f"JWK members beyond the spec's: {set(jwk) - allowed}")
        raw = unbase64url(jwk["x"])
        if len(raw) != 32 or jwk["kid"] != kid_of_raw(raw):
            raise SpecViolation(f"kid {jwk['kid']} is not the SHA-256 prefix of x")
        retired = jwk.get("badge:retired_at")
        if retired is not None and not UTC_TIME.match(retired):
            raise SpecViolation(f"badge:retired_at is not RFC 3339 UTC: {retired!r}")
        found[jwk["kid"]] = (Ed25519PublicKey.from_public_bytes(raw), jwk)
    return found


@dataclass
class Opened:
    """What a valid envelope holds."""

    payload_type: str
    payload: bytes
    kid: str
    document: dict[str, Any]
    statement_digest: str = field(init=False)

    def __post_init__(self) -> None:
        self.statement_digest = hashlib.sha256(self.payload).hexdigest()


def open_envelope(data: bytes, keys: Mapping[str, tuple[Ed25519PublicKey, Any]]) -> Opened:
    """Section 2: the DSSE envelope's shape, its key, the signature over the PAE,
    and a payload in RFC 8785 form. Raises SpecViolation or InvalidSignature."""
    envelope = json.loads(data)
    if set(envelope) != {"payloadType", "payload", "signatures"}:
        raise SpecViolation(f"envelope members: {sorted(envelope)}")
    payload = base64.b64decode(envelope["payload"], validate=True)
    if len(envelope["signatures"]) != 1:
        raise SpecViolation("one signature expected")
    [signature] = envelope["signatures"]
    if set(signature) != {"keyid", "sig"}:
        raise SpecViolation(f"signature members: {sorted(signature)}")
    if signature["keyid"] not in keys:
        raise SpecViolation(f"unknown key {signature['keyid']}")
    public, _ = keys[signature["keyid"]]
    sig = base64.b64decode(signature["sig"], validate=True)
    public.verify(sig, dsse_pae(envelope["payloadType"], payload))
    document = json.loads(payload)
    if rfc8785.dumps(document) != payload:
        raise SpecViolation("the payload is not in RFC 8785 form")
    return Opened(envelope["payloadType"], payload, signature["keyid"], document)


def predicate_core(predicate: Mapping[str, Any]) -> dict[str, Any]:
    """Section 2: the predicate without issued_at, supersedes and collector."""
    return {k: v for k, v in predicate.items() if k not in ("issued_at", "supersedes", "collector")}


def check_statement(opened: Opened, kind: str, subject_name: str) -> dict[str, Any]:
    """Section 2: an in-toto Statement v1 of `kind` about `subject_name`, whose
    subject digest is the SHA-256 of its predicate's core. The predicate."""
    statement = opened.document
    if opened.payload_type != IN_TOTO:
        raise SpecViolation(f"payloadType {opened.payload_type}")
    if set(statement) != {"_type", "subject", "predicateType", "predicate"}:
        raise SpecViolation(f"statement members: {sorted(statement)}")
    if statement["_type"] != STATEMENT_V1 or statement["predicateType"] != PREDICATE_TYPES[kind]:
        raise SpecViolation(f"{statement['_type']} / {statement['predicateType']}")
    if statement["subject"] != [
        {
            "name": subject_name,
            "digest": {
                "sha256": hashlib.sha256(
                    rfc8785.dumps(predicate_core(statement["predicate"]))
                ).hexdigest()
            },
        }
    ]:
        raise SpecViolation(f"subject {statement['subject']!r}")
    predicate: dict[str, Any] = statement["predicate"]
    if not UTC_TIME.match(predicate["issued_at"]):
        raise SpecViolation(f"issued_at {predicate['issued_at']!r}")
    if set(predicate["collector"]) != {"version", "conventions"}:
        raise SpecViolation(f"collector {predicate['collector']!r}")
    supersedes = predicate["supersedes"]
    if supersedes is not None and not HEX64.match(supersedes):
        raise SpecViolation(f"supersedes {supersedes!r}")
    return predicate


def next_link(previous: str, statement_digest: str) -> str:
    """Section 3: chain_n = SHA-256(bytes(chain_{n-1}) + bytes(statement digest))."""
    return hashlib.sha256(bytes.fromhex(previous) + bytes.fromhex(statement_digest)).hexdigest()


def chain_of(statement_digests: Sequence[str]) -> str:
    chain = "0" * 64
    for digest in statement_digests:
        chain = next_link(chain, digest)
    return chain
