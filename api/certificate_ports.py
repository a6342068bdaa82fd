"""What the certificate and badge views need from the collector (docs/certificates.md).

Two ports beside api.ports' ReadStore: `CertificateReads`, reads only (the
badge needs no signing key), and `CertificateDesk`, which signs, stores and
logs certificates and answers the log and the keys. The views decide what a
certificate says (public fields only, built by the views that answer the
keyless API); the desk decides nothing about content: it signs what it is
handed, once per distinct subject content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from api.ports import AgentInfo, RunInfo


@dataclass(frozen=True, slots=True)
class KeyRef:
    """An ingest key as `badge-collector keys list` shows it (never the secret)."""

    id: int
    role: str


@dataclass(frozen=True, slots=True)
class CanonicalSpans:
    """A run's spans in the canonical form of the spans digest (CERTS.md section 2)."""

    body: bytes  # RFC 8785 bytes of the flat list ordered by span id
    count: int
    digest: str  # SHA-256 (hex) of `body`
    root_key: KeyRef | None  # the key that sent the root span; None: keyless or unknown


@dataclass(frozen=True, slots=True)
class BadgeInfo:
    """An agent as its badge shows it, from the kept board (no scan of runs)."""

    agent_id: str
    name: str
    composite_score: float | None
    completed_runs: int
    graded_runs: int
    deleted: bool


class CertificateReads(Protocol):
    def agent_record(self, agent_id: str) -> AgentInfo | None:
        """An agent, soft-deleted ones included (with `deleted_at`): their
        certificates still answer."""
        ...

    def badge(self, agent_id: str) -> BadgeInfo | None: ...

    def screening_agents(self, screening_id: str) -> list[str]:
        """The ids of the agents whose runs name this screening id."""
        ...

    def canonical_spans(self, run: RunInfo) -> CanonicalSpans: ...


@dataclass(frozen=True, slots=True)
class CertificateRequest:
    """A subject to certify: `content` is its predicate without the fields an
    issue adds (issued_at, collector, supersedes), as JSON values."""

    kind: str  # run, screening or score
    subject: str  # run:<id>, screening:<id>, agent:<id>
    agent_id: str
    content: Mapping[str, Any]
    basis: str | None = None  # digest of what the content was computed from (runs)


@dataclass(frozen=True, slots=True)
class Certificate:
    kind: str
    subject: str
    agent_id: str
    statement_digest: str
    subject_digest: str
    basis: str | None
    supersedes: str | None
    issued_at: str
    kid: str
    envelope: bytes  # the DSSE envelope's JSON, as stored and served


@dataclass(frozen=True, slots=True)
class LogEntry:
    n: int
    statement_digest: str
    kind: str
    subject: str
    issued_at: str
    kid: str
    chain: str


@dataclass(frozen=True, slots=True)
class PublicKey:
    kid: str
    public_key: bytes  # 32 raw bytes
    created_at: float
    retired_at: float | None


class CertificateDesk(Protocol):
    """Issues, keeps and logs certificates. Without a signing key every
    method that signs raises api.problems' Unavailable saying how to set one."""

    def newest(self, agent_id: str, subjects: Sequence[str]) -> dict[str, Certificate]:
        """The current (newest) certificate of each of these subjects that has one."""
        ...

    def issue(self, request: CertificateRequest, current: Certificate | None) -> Certificate:
        """The subject's current certificate when its content is unchanged,
        else a new one superseding it, stored and appended to the log.
        `current`: the subject's newest certificate as the caller read it
        (`newest`); the desk reads it again under its lock before issuing."""
        ...

    def entry(self, statement_digest: str) -> tuple[LogEntry, str | None] | None:
        """A certificate's log entry and the statement digest of the one that
        supersedes it (None: it is current); None when not in the log."""
        ...

    def log(self, after: int, limit: int) -> tuple[list[LogEntry], int]:
        """Entries after `after`, at most `limit`, and the log's size."""
        ...

    def head(self) -> bytes:
        """The signed log head (a DSSE envelope's JSON)."""
        ...

    def public_keys(self) -> list[PublicKey]:
        """Every public key ever used, the current one first."""
        ...
