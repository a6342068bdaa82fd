"""The one ingest path both doors share: authenticate -> decode -> validate -> sink.

The gRPC servicer and the HTTP route only adapt their transport to these
calls and map `IngestError`s through `errors.ERROR_TABLE`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import proto
from collector.agents import AgentDirectory, agent_id, agent_name
from collector.assembly.conventions import SELECTED_KEYS, USAGE_PREFIXES
from collector.assembly.facts import span_facts
from collector.errors import BadRequest, PayloadTooLarge, Unauthenticated
from collector.metrics import Metrics
from collector.pipeline import Batch, IngestPipeline
from collector.storage.keys import KeyStore, Principal

SELECTION = proto.Selection(keys=SELECTED_KEYS, prefixes=USAGE_PREFIXES)
LOCAL_OWNER = "local"


@dataclass(frozen=True, slots=True)
class Accepted:
    """What the receiver answers once `committed` resolves."""

    committed: Future[None]
    accepted: int
    rejected: int
    error_message: str


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """`authorization: Bearer KEY` or `x-api-key: KEY` (lower-case names)."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    api_key = headers.get("x-api-key", "").strip()
    return api_key or None


class Ingest:
    def __init__(
        self,
        keys: KeyStore,
        directory: AgentDirectory,
        pipeline: IngestPipeline,
        metrics: Metrics,
        clock: Callable[[], float],
        limits: proto.Limits,
        *,
        insecure: bool = False,
    ) -> None:
        self._keys = keys
        self._directory = directory
        self._pipeline = pipeline
        self._metrics = metrics
        self._clock = clock
        self.limits = limits
        self._insecure = insecure

    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        key = key_from_headers(headers)
        if key is None:
            if self._insecure:
                return Principal(LOCAL_OWNER, "agent")
            raise Unauthenticated("missing ingest key: send 'authorization: Bearer KEY'")
        principal = self._keys.authenticate(key)
        if principal is None:
            raise Unauthenticated("unknown or revoked ingest key")
        return principal

    def parse(self, body: bytes, content: str, *, gzip: bool, max_bytes: int) -> Any:
        """Body bytes -> request message; size and format errors mapped here."""
        try:
            if gzip:
                body = proto.gunzip_limited(body, max_bytes)
            return proto.parse_request(body, content)
        except proto.TooLarge as exc:
            raise PayloadTooLarge(str(exc)) from None
        except proto.DecodeError as exc:
            raise BadRequest(str(exc)) from None

    def accept(self, principal: Principal, request: Any, transport: str) -> Accepted:
        """Validate, classify and queue the request's spans for one commit."""
        try:
            decoded = proto.decode_request(request, SELECTION, self.limits)
        except proto.TooLarge as exc:
            raise PayloadTooLarge(str(exc)) from None
        received = len(decoded.spans) + decoded.rejected
        self._metrics.spans_received.labels(transport).inc(received)
        now = self._clock()
        owner, grader = principal.owner, principal.role == "grader"
        rows: list[dict[str, Any]] = []
        agent_rows: dict[str, dict[str, Any]] = {}
        traces: set[tuple[str, str]] = set()
        deleted = 0
        for span in decoded.spans:
            name = agent_name(span.resource)
            ident = agent_id(owner, name)
            if self._directory.is_deleted(ident):
                deleted += 1
                continue
            if ident not in agent_rows and not self._directory.is_known(ident):
                agent_rows[ident] = {
                    "id": ident,
                    "owner": owner,
                    "name": name,
                    "first_seen_at": now,
                }
            role, rule, facts = span_facts(
                span.name, span.attributes, span.resource, span.exception_type
            )
            rows.append(
                {
                    "owner": owner,
                    "trace_id": span.trace_id,
                    "span_id": span.span_id,
                    "parent_span_id": span.parent_span_id,
                    "agent_id": ident,
                    "name": span.name,
                    "kind": span.kind,
                    "start_ns": span.start_ns,
                    "end_ns": span.end_ns,
                    "status_code": span.status_code,
                    "status_message": span.status_message,
                    "flags": span.flags,
                    "scope_name": span.scope_name,
                    "received_at": now,
                    "grader": grader,
                    "role": role,
                    "rule": rule,
                    "facts": json.dumps(facts, separators=(",", ":")),
                    "encoded": span.encoded,
                    "resource": span.resource_encoded,
                }
            )
            traces.add((owner, span.trace_id))
        errors = list(decoded.errors)
        if deleted:
            errors.append(f"{deleted} span(s): agent deleted")
        rejected = decoded.rejected + deleted
        if rejected:
            for reason in errors:
                self._metrics.spans_rejected.labels(transport, reason.split(": ", 1)[-1]).inc()
        committed: Future[None]
        if rows:
            batch = Batch(rows, list(agent_rows.values()), traces)
            committed = self._pipeline.submit(batch)
            committed.add_done_callback(
                lambda f: self._after_commit(f, set(agent_rows), len(rows), transport)
            )
        else:
            committed = Future()
            committed.set_result(None)
        return Accepted(committed, len(rows), rejected, "; ".join(errors))

    def _after_commit(
        self, future: Future[None], agents: set[str], count: int, transport: str
    ) -> None:
        if future.exception() is None:
            self._directory.remember(agents)
            self._metrics.spans_accepted.labels(transport).inc(count)
