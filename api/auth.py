"""Who a request acts as: the one place keys are read and checked.

Both OTLP doors and the read API use it, so this module imports no web
framework (the decoder processes and the gRPC door load it too):
- `key_from_headers`: the key from `authorization: Bearer KEY` or
  `x-api-key: KEY` (API.md "Authentication");
- `Principal`: a key's owner and role (`agent` or `grader`);
- `KeyChecker`: what checks a key (the collector's key table implements it);
- `INSECURE_OWNER`: whom keyless ingest and personal settings belong to
  under --insecure, and the owner of the key a new database starts with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

INSECURE_OWNER: Final = "local"
AGENT, GRADER = "agent", "grader"


@dataclass(frozen=True, slots=True)
class Principal:
    """Whose key it is, and what it may do (`agent` or `grader`)."""

    owner: str
    role: str


class KeyChecker(Protocol):
    def authenticate(self, key: str) -> Principal | None:
        """The key's principal; None for an unknown or revoked key."""
        ...


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """`authorization: Bearer KEY` or `x-api-key: KEY` (lower-case header names)."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    api_key = headers.get("x-api-key", "").strip()
    return api_key or None
