"""Request bytes -> storage rows, in decoder processes.

Decoding, validating and classifying spans is pure CPU in Python; in the
server process it competed for the GIL with framing, the batch writer and
run assembly, and capped ingest near one core (bench/ingest.py). A small
pool of decoder processes does it instead; the server process receives
ready row tuples (the pool: ingest.decoder_pool). `workers=0` decodes
inline (tests, one-core machines).

Spans are recognised with the server's conventions (collector.conventions):
the decoders are spawned, so each compiles the very files the server loaded
(their texts, sent once through the pool's initializer) and checks it got
the same digest.

Errors raised here are `IngestError`s; they pickle back to the caller.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from typing import Any

import proto
from collector.assembly.attributes import (
    CONTENT_MARKERS,
    ENGINE_KEYS,
    REQUESTED_TAILS,
    SELECTED_EVENTS,
    USAGE_PREFIXES,
)
from collector.assembly.facts import SpanFacts, resource_facts, span_facts
from collector.assembly.identity import agent_id, agent_name
from collector.assembly.runs import Timers
from collector.conventions import ConventionSet, ConventionSource, compile_set
from collector.errors import BadRequest, PayloadTooLarge
from collector.runs.preassemble import FreshRuns, preassemble
from collector.runs.run_rows import encode_facts
from collector.storage.rows import SpanRow, resource_digest, run_rows, span_row, span_rows


@dataclass(frozen=True, slots=True)
class Recognising:
    """What a decoder classifies spans with: the compiled conventions, and
    the attribute keys they and run assembly read, lifted in the one pass
    over a span's attributes at decode (CONVENTIONS.md section 8)."""

    conventions: ConventionSet
    selection: proto.Selection


def recognising(conventions: ConventionSet) -> Recognising:
    selection = proto.Selection(
        keys=conventions.keys | ENGINE_KEYS,
        prefixes=USAGE_PREFIXES,
        events=SELECTED_EVENTS,
        markers=CONTENT_MARKERS,
        marker_tails=REQUESTED_TAILS,
    )
    return Recognising(conventions, selection)


# Memory a decoded span takes beyond its encoded bytes and facts (the row
# tuple, its strings, the pre-assembled run): 732 B per span measured with
# tracemalloc over decode_job on bench/payloads.py requests; rounded up.
# The in-flight bound (ingest.admission) counts it.
ROW_OVERHEAD_BYTES = 1024


@dataclass(frozen=True, slots=True)
class DecodeJob:
    body: bytes
    content: str  # "protobuf" or "json"
    gzip: bool
    max_bytes: int
    limits: proto.Limits
    owner: str
    grader: bool
    received_at: float
    timers: Timers = Timers()
    key_id: int | None = None  # the sending key's id (a run certificate names it)


@dataclass(slots=True)
class DecodedRows:
    """Span rows, plus what refused the rest."""

    rows: list[SpanRow] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> name
    resources: dict[bytes, bytes] = field(default_factory=dict)  # digest -> encoded
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # why spans were refused -> how many
    # Runs assembled from this request's spans alone: valid only if the
    # database holds no span of their trace yet (collector.runs.fresh).
    runs: FreshRuns = field(default_factory=dict)
    memory_bytes: int = 0  # what these rows hold in memory, roughly (admission)

    # From the decoder process to the server: rows travel as plain tuples,
    # which pickle in C; named rows would cost a Python call each way per row.
    def __getstate__(self) -> tuple[Any, ...]:
        runs = {trace: list(map(tuple, rows)) for trace, rows in self.runs.items()}
        plain = list(map(tuple, self.rows))
        return (
            plain,
            self.agents,
            self.resources,
            self.rejected,
            self.reasons,
            runs,
            self.memory_bytes,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        rows, self.agents, self.resources, self.rejected, self.reasons, runs, self.memory_bytes = (
            state
        )
        self.rows = span_rows(rows)
        self.runs = {trace: run_rows(plain) for trace, plain in runs.items()}


_ids: dict[tuple[str, str], str] = {}


def _agent_id(owner: str, name: str) -> str:
    key = (owner, name)
    ident = _ids.get(key)
    if ident is None:
        if len(_ids) > 100_000:
            _ids.clear()
        ident = _ids[key] = agent_id(owner, name)
    return ident


def decode_job(job: DecodeJob, using: Recognising) -> DecodedRows:
    """gunzip -> parse -> validate -> classify -> row tuples."""
    try:
        body = proto.gunzip_limited(job.body, job.max_bytes) if job.gzip else job.body
        request = proto.parse_request(body, job.content)
        decoded = proto.decode_request(request, using.selection, job.limits)
    except proto.TooLarge as exc:
        raise PayloadTooLarge(str(exc)) from None
    except proto.DecodeError as exc:
        raise BadRequest(str(exc)) from None
    result = DecodedRows(rejected=decoded.rejected, reasons=dict(decoded.reasons))
    owner, grader, now, key_id = job.owner, job.grader, job.received_at, job.key_id
    # resource -> agent id, inherited facts, digest
    names: dict[int, tuple[str, dict[str, str], bytes]] = {}
    by_trace: dict[str, dict[str, SpanFacts]] = {}
    rows, agents, resources = result.rows, result.agents, result.resources
    size = 0  # bytes of the rows' encoded spans and facts
    recognise = using.conventions.recognizer.recognise
    for span in decoded.spans:
        # Unpacked once: a NamedTuple's field reads are each a descriptor call.
        (
            trace_id,
            span_id,
            parent,
            name,
            kind,
            start,
            end,
            code,
            message,
            flags,
            attributes,
            resource,
            scope_name,
            events,
            encoded,
            resource_encoded,
        ) = span
        known = names.get(id(resource))  # one resource per ResourceSpans, shared
        if known is None:
            agent = agent_name(resource)
            ident = _agent_id(owner, agent)
            agents[ident] = agent
            digest = resource_digest(resource_encoded)
            resources[digest] = resource_encoded
            known = names[id(resource)] = (ident, resource_facts(resource), digest)
        ident, inherited, digest = known
        recognition = recognise(name, kind, code, scope_name, attributes, resource)
        role, rule = recognition.role, recognition.label
        facts = span_facts(recognition, name, attributes, inherited, events)
        members = by_trace.get(trace_id)
        if members is None:
            members = by_trace[trace_id] = {}
        if span_id not in members:
            members[span_id] = SpanFacts(
                span_id,
                parent,
                ident,
                name,
                start,
                end,
                code,
                flags,
                now,
                grader,
                role,
                rule,
                facts,
            )
        facts_text = encode_facts(facts)
        size += len(encoded) + len(facts_text)
        rows.append(
            span_row(
                (
                    owner,
                    trace_id,
                    span_id,
                    parent,
                    ident,
                    name,
                    kind,
                    start,
                    end,
                    code,
                    message,
                    flags,
                    scope_name,
                    now,
                    grader,
                    role,
                    rule,
                    facts_text,
                    encoded,
                    digest,
                    key_id,
                )
            )
        )
    result.memory_bytes = ROW_OVERHEAD_BYTES * len(rows) + size
    result.runs = preassemble(
        owner,
        {trace: members.values() for trace, members in by_trace.items()},
        now,
        job.timers,
        using.conventions.digest,
    )
    return result


def tune_gc() -> None:
    """Fewer garbage collections while spans stream through (server and
    decoders): every span row is a container object that lives until its
    commit, and at the default gen-0 threshold of 700 allocations a 512-span
    request set off dozens of collections, each walking the rows in flight.
    What was loaded at start is frozen out of every collection.
    bench/ingest.py, OTLP/HTTP: ~31k -> ~34k spans/s.
    """
    gc.freeze()
    gc.set_threshold(_GC_GEN0, 50, 100)


_GC_GEN0 = 100_000


_worker: Recognising | None = None  # a decoder process's conventions, compiled once


def start_worker(parent: int, sources: tuple[ConventionSource, ...], digest: str) -> None:
    """Worker initializer: compile the server's conventions, then watch it."""
    global _worker
    conventions = compile_set(sources)
    if conventions.digest != digest:  # the same texts compile to the same set
        raise RuntimeError(f"decoder conventions {conventions.digest} are not {digest}")
    _worker = recognising(conventions)
    watch_parent(parent)


def decode_in_worker(job: DecodeJob) -> DecodedRows:
    if _worker is None:
        raise RuntimeError("a decoder process started without its conventions")
    return decode_job(job, _worker)


def watch_parent(parent: int) -> None:
    """Exit when the collector process is gone; GC tuned.

    A SIGKILLed collector cannot shut its pool down; without this its
    decoders would live on (holding its stdout open).
    """
    tune_gc()
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def default_workers() -> int:
    """One decoder per core (at most 4).

    Measured on 2 cores (bench/ingest.py): the server process needs about 0.6
    of a core at full load, so a second decoder still pays off.
    """
    return max(1, min(4, os.cpu_count() or 1))
