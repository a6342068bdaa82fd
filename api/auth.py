"""Who a request acts as: the one place keys are read and checked.

Both OTLP doors and the read API use it, so this module imports no web
framework (the decoder processes and the gRPC door load it too):
- `key_from_headers`: the key from `authorization: Bearer KEY` or
  `x-api-key: KEY` (API.md "Authentication");
- `key_from_basic`: the key as the password of `authorization: Basic ...`,
  which only the Langfuse SDK's OTLP door takes (docs/otlp.md);
- `Principal`: a key's owner and role (`agent` or `grader`);
- `KeyChecker`: what checks a key (the collector's key table implements it);
- `INSECURE_OWNER`: whom keyless ingest and personal settings belong to
  under --insecure, and the owner of the key a new database starts with;
- `Caller`: who reads, and what that caller may see or change (the views
  ask it, and it refuses with api.problems' KeyRequired or NotYours).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NoReturn, Protocol

from api.problems import KeyRequired, NotYours

INSECURE_OWNER: Final = "local"
AGENT, GRADER = "agent", "grader"


@dataclass(frozen=True, slots=True)
class Principal:
    """Whose key it is, and what it may do (`agent` or `grader`)."""

    owner: str
    role: str
    key_id: int | None = None  # the id `keys list` shows; None for keyless ingest


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


def key_from_basic(headers: Mapping[str, str]) -> str | None:
    """The password of `authorization: Basic base64(USER:PASSWORD)`: the
    Langfuse SDK sends its public key as USER (any text here) and its secret
    key, an ingest key, as PASSWORD. None when absent or malformed. Only the
    Langfuse door reads it: every other door and the read API take Bearer."""
    auth = headers.get("authorization", "")
    if auth[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(auth[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    _, colon, password = decoded.partition(":")
    return (password.strip() or None) if colon else None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who reads: the owner of a valid key, or nobody; `open` under --insecure.

    docs/api.md "Who may read what": --insecure opens every read (traces and
    the text a span or a grader wrote included) and no write: deleting an
    agent, posting a grade and saving radar weights still take a key.
    """

    owner: str | None
    open: bool
    role: str | None = None  # the key's: `agent` or `grader`

    def sees_owned(self, owner: str) -> bool:
        """May this caller read what only `owner` may (a trace, a grade's text)?"""
        return self.open or (self.owner is not None and self.owner == owner)

    def require_reader(self, owner: str) -> None:
        """An owner-only read: the owner's key, or anyone under --insecure."""
        if not self.sees_owned(owner):
            self._refuse()

    def require_owner(self, owner: str) -> None:
        """A write to the owner's things: their key, whatever the mode."""
        if self.owner is None or self.owner != owner:
            self._refuse()

    def _refuse(self) -> NoReturn:
        if self.owner is None:
            raise KeyRequired("an ingest key of the owner is required")
        raise NotYours("this key belongs to another owner")

    def personal(self) -> str | None:
        """The owner whose personal settings apply when reading: the key's;
        `local` when --insecure lets keyless callers in (as keyless ingest);
        else None."""
        if self.owner is not None:
            return self.owner
        return INSECURE_OWNER if self.open else None

    def grader(self) -> str:
        """The owner a grade is stored under: a `grader` key's (no key refused,
        --insecure or not; an agent key refused)."""
        if self.owner is None:
            raise KeyRequired("a grader key is required")
        if self.role != GRADER:
            raise NotYours("only a key with the grader role may post grades")
        return self.owner

    def me(self) -> str:
        """`personal`, required (reading one's settings)."""
        owner = self.personal()
        if owner is None:
            raise KeyRequired("an ingest key is required")
        return owner

    def key_owner(self) -> str:
        """The owner of the caller's key, for a write: a valid key, --insecure or not."""
        if self.owner is None:
            raise KeyRequired("an ingest key is required")
        return self.owner


# The CLI reads its own database in-process: as a keyless caller under --insecure.
LOCAL_CALLER: Final = Caller(owner=None, open=True)
