"""The one ingest path both doors share: authenticate -> admit -> export
(decode -> validate -> sink -> commit) -> outcome.

The gRPC servicer and the HTTP route only adapt their transport to these
calls (reading the body or message in time, growing the reservation as an
HTTP body arrives) and map an outcome's `IngestError` through
`errors.ERROR_TABLE`. Every export's outcome is counted here, once
(`export_requests{transport,status}`), whatever door and however it ended.

What the path reads from the database itself (the key, deleted agents, an
owner's agent count) fails as `StoreUnavailable` while the database is
down, as the writer's commit does: never as the driver's own error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass

import proto
from api.auth import INSECURE_OWNER, Principal, key_from_basic, key_from_headers
from collector.assembly.runs import Timers
from collector.errors import IngestError, Internal, StoreUnavailable, Unauthenticated
from collector.ingest.admission import InflightBudget, Reservation
from collector.ingest.decoder_pool import Decoder
from collector.ingest.decoding import DecodedRows, DecodeJob
from collector.ingest.export import Export, Outcome, Wire
from collector.metrics import Metrics
from collector.storage.agents import AgentDirectory
from collector.storage.health import DatabaseHealth
from collector.storage.keys import KeyStore
from collector.storage.rows import AgentRow, ResourceRow
from collector.storage.span_rows import Sender
from collector.writer import Batch, BatchWriter

log = logging.getLogger(__name__)
AGENT_DELETED = "agent deleted"


@dataclass(frozen=True, slots=True)
class Accepted:
    """What the receiver answers once `committed` resolves."""

    committed: Future[None]
    accepted: int
    rejected: int
    error_message: str


class Ingest:
    def __init__(
        self,
        keys: KeyStore,
        directory: AgentDirectory,
        writer: BatchWriter,
        metrics: Metrics,
        clock: Callable[[], float],
        limits: proto.Limits,
        decoder: Decoder,
        *,
        max_body_bytes: int,
        timers: Timers,
        budget: InflightBudget,
        health: DatabaseHealth,
        max_agents_per_owner: int = 10_000,
        insecure: bool = False,
    ) -> None:
        self._keys = keys
        self._directory = directory
        self._writer = writer
        self._metrics = metrics
        self._clock = clock
        self.limits = limits
        self.max_body_bytes = max_body_bytes
        self._timers = timers
        self._decoder = decoder
        self._insecure = insecure
        self._max_agents = max_agents_per_owner
        self._budget = budget
        self._health = health

    def admit(self, principal: Principal, nbytes: int) -> Reservation:
        """Reserve room for the `nbytes` of a request already in hand, after
        its key was checked; Overloaded at once when the in-flight budget
        has no room for it (collector.ingest.admission)."""
        reservation = self._budget.reserve(principal.owner)
        reservation.grow_to(nbytes)
        return reservation

    def lacks_key(self, headers: Mapping[str, str]) -> bool:
        """True when `authenticate` would refuse without looking anything up
        (no key, and not --insecure): a door refuses such a request on its
        headers alone, before it takes a thread or reads a body."""
        return not self._insecure and key_from_headers(headers) is None

    def authenticate(self, headers: Mapping[str, str], *, basic: bool = False) -> Principal:
        """The key's principal; with `basic` (the Langfuse door) the password
        of `authorization: Basic` is a key too, checked the same way."""
        key = key_from_headers(headers)
        if key is None and basic:
            key = key_from_basic(headers)
        if key is None:
            if self._insecure:
                return Principal(INSECURE_OWNER, "agent")
            wanted = "'authorization: Bearer KEY'" + (
                " or Basic with KEY as password" if basic else ""
            )
            raise Unauthenticated(f"missing ingest key: send {wanted}")
        with self._database():
            principal = self._keys.authenticate(key)
        if principal is None:
            raise Unauthenticated("unknown or revoked ingest key")
        return principal

    def export(
        self,
        principal: Principal,
        body: bytes,
        wire: Wire,
        transport: str,
        admitted: Reservation,
    ) -> Export:
        """One export, from its body in hand to its commit (drive it with
        export.run_blocking or export.run_async, holding `admitted`):
        decode in a decoder, refuse spans of deleted agents, queue the rest
        for one commit, and wait for it. Ends in its Outcome, counted."""
        try:
            decoding = self._decode(principal, body, wire)
            del body  # the decoder has it; the rows are what is held from here
            decoded: DecodedRows = yield decoding
            self._metrics.observe_stages(decoded.cpu_s)
            accepted = self._accept(decoded, transport, admitted)
            yield accepted.committed
            outcome = Outcome(
                wire.codec, accepted.accepted, accepted.rejected, accepted.error_message
            )
        except IngestError as error:
            outcome = Outcome(wire.codec, error=error)
        except Exception:  # answered INTERNAL; the door stays open
            log.exception("%s export failed", transport)
            outcome = Outcome(wire.codec, error=Internal())
        return self._counted(transport, outcome)

    def refuse(self, transport: str, error: IngestError, codec: proto.Codec) -> Outcome:
        """The outcome of a request refused before its export began (method,
        key, media, size, a body not sent in time, a client gone), counted."""
        return self._counted(transport, Outcome(codec, error=error))

    def _counted(self, transport: str, outcome: Outcome) -> Outcome:
        self._metrics.export_requests.labels(transport, outcome.kind).inc()
        return outcome

    def _decode(self, principal: Principal, body: bytes, wire: Wire) -> Future[DecodedRows]:
        """Hand the body to a decoder; the future holds rows or an IngestError."""
        sender = Sender(
            owner=principal.owner,
            grader=principal.role == "grader",
            received_at=self._clock(),
            key_id=principal.key_id,
        )
        job = DecodeJob(
            body=body,
            content=wire.codec.name,
            gzip=wire.gzip,
            max_bytes=self.max_body_bytes,
            limits=self.limits,
            sender=sender,
            timers=self._timers,
        )
        return self._decoder.submit(job)

    def _accept(self, decoded: DecodedRows, transport: str, admitted: Reservation) -> Accepted:
        """Refuse spans of deleted agents, then queue the rest for one commit.

        The request's reservation first grows to what its rows hold: a small
        gzip body can decode to many spans (Overloaded if there is no room).
        """
        admitted.grow_to(decoded.memory_bytes)
        self._metrics.spans_received.labels(transport).inc(len(decoded.rows) + decoded.rejected)
        with self._database():
            deleted = {ident for ident in decoded.agents if self._directory.is_deleted(ident)}
            refused = self._over_agent_limit(decoded, deleted)
        rows = decoded.rows
        reasons = dict(decoded.reasons)
        if deleted:
            rows = [row for row in rows if row.agent_id not in deleted]
            reasons[AGENT_DELETED] = len(decoded.rows) - len(rows)
        if refused:
            kept = [row for row in rows if row.agent_id not in refused]
            reasons[self._agent_limit_reason()] = len(rows) - len(kept)
            rows, deleted = kept, deleted | refused
        rejected = decoded.rejected + len(decoded.rows) - len(rows)
        for reason, count in reasons.items():
            self._metrics.spans_rejected.labels(transport, reason).inc(count)
        committed: Future[None]
        if rows:
            new_agents = {
                ident: name
                for ident, name in decoded.agents.items()
                if ident not in deleted and not self._directory.is_known(ident)
            }
            owner, received_at = rows[0].owner, rows[0].received_at
            batch = Batch(
                owner,
                rows,
                [AgentRow(ident, owner, name, received_at) for ident, name in new_agents.items()],
                [
                    ResourceRow(digest, encoded, received_at)
                    for digest, encoded in decoded.resources.items()
                ],
                {(owner, row.trace_id) for row in rows},
                attached=None if deleted else decoded.runs,
            )
            committed = self._writer.submit(batch)
            committed.add_done_callback(
                lambda f: self._after_commit(f, set(new_agents), len(rows), transport)
            )
        else:
            committed = Future()
            committed.set_result(None)
        message = "; ".join(f"{count} span(s): {reason}" for reason, count in reasons.items())
        return Accepted(committed, len(rows), rejected, message)

    @contextmanager
    def _database(self) -> Iterator[None]:
        """The path's own reads: a database that cannot answer is StoreUnavailable."""
        try:
            yield
        except Exception as exc:
            if self._health.failed(exc):
                raise StoreUnavailable() from None
            raise

    def _over_agent_limit(self, decoded: DecodedRows, deleted: set[str]) -> set[str]:
        """New agents past the owner's bound (BADGE_MAX_AGENTS_PER_OWNER)."""
        if not decoded.rows:
            return set()
        new = {
            ident
            for ident in decoded.agents
            if ident not in deleted and not self._directory.is_known(ident)
        }
        owner = decoded.rows[0].owner
        return new - self._directory.admissible(owner, new, self._max_agents)

    def _agent_limit_reason(self) -> str:
        return f"agent limit: an owner has at most {self._max_agents} agents"

    def _after_commit(
        self, future: Future[None], agents: set[str], count: int, transport: str
    ) -> None:
        if future.exception() is None:
            self._directory.remember(agents)
            self._metrics.spans_accepted.labels(transport).inc(count)
