"""in-toto Statement v1 of the three kinds, their digests, and the log's chain.

CERTS.md sections 2 and 3. A statement is
`{"_type", "subject": [{"name", "digest": {"sha256"}}], "predicateType", "predicate"}`
in RFC 8785 form. The subject digest is the SHA-256 of the predicate's
canonical form without the three fields that change on every issue
(`issued_at`, `supersedes`, `collector`): two certificates of an unchanged
subject have the same one. The statement digest is the SHA-256 of the
whole statement's canonical bytes (the envelope's payload).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from collector.certificates.canonical import canonical_json, digest_of, joined, members, sha256_hex

STATEMENT_V1: Final = "https://in-toto.io/Statement/v1"
PREDICATE_TYPES: Final = {
    "run": "urn:badge-collector:run:v1",
    "screening": "urn:badge-collector:screening:v1",
    "score": "urn:badge-collector:score:v1",
}
KIND_OF_TYPE: Final = {value: key for key, value in PREDICATE_TYPES.items()}
SUBJECT_PREFIX: Final = {"run": "run:", "screening": "screening:", "score": "agent:"}
VOLATILE: Final = ("issued_at", "supersedes", "collector")
HEAD_V1: Final = "urn:badge-collector:log-head:v1"
ZERO_CHAIN: Final = "0" * 64  # chain_0 (CERTS.md section 3)


def subject_digest(predicate: Mapping[str, Any]) -> str:
    """Of a `json_ready` predicate, with or without its volatile fields."""
    return digest_of({k: v for k, v in predicate.items() if k not in VOLATILE})


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a predicate carries besides its subject's content."""

    issued_at: str  # RFC 3339 UTC, the collector's clock
    version: str  # the collector package's
    conventions: str  # the conventions digest (CONVENTIONS.md section 4)
    supersedes: str | None  # the statement digest of the certificate replaced


@dataclass(frozen=True, slots=True)
class Statement:
    payload: bytes  # canonical bytes: the envelope's payload
    digest: str  # statement digest
    subject_digest: str


def statement(kind: str, subject: str, content: Mapping[str, Any], stamp: Stamp) -> Statement:
    """The statement of a subject: `content` is its `json_ready` predicate
    without the volatile fields, `stamp` what this issue adds. The content is
    canonicalised once, for its subject digest and inside the payload (the
    pure-Python rfc8785 is most of a certificate's CPU otherwise)."""
    parts = members(content)
    bare = joined(parts)
    digest = sha256_hex(bare)
    volatile = {
        "issued_at": stamp.issued_at,
        "collector": {"version": stamp.version, "conventions": stamp.conventions},
        "supersedes": stamp.supersedes,
    }
    predicate = joined({**parts, **members(volatile)})
    head = members(
        {
            "_type": STATEMENT_V1,
            "subject": [{"name": subject, "digest": {"sha256": digest}}],
            "predicateType": PREDICATE_TYPES[kind],
        }
    )
    payload = joined({**head, "predicate": b'"predicate":' + predicate})
    return Statement(payload, sha256_hex(payload), digest)


def next_chain(previous: str, statement_digest: str) -> str:
    """chain_n = SHA-256(bytes(chain_{n-1}) + bytes(statement digest)), hex."""
    return hashlib.sha256(bytes.fromhex(previous) + bytes.fromhex(statement_digest)).hexdigest()


def head_payload(size: int, chain: str, issued_at: str) -> bytes:
    return canonical_json({"_type": HEAD_V1, "size": size, "chain": chain, "issued_at": issued_at})
