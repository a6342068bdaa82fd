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
import time
from dataclasses import dataclass, field
from typing import Any

import proto
from collector.assembly.recognise import selection
from collector.assembly.runs import Timers
from collector.conventions import ConventionSet, ConventionSource, compile_set
from collector.errors import BadRequest, PayloadTooLarge
from collector.ingest.stages import build_rows, recognise
from collector.runs.preassemble import FreshRuns, preassemble
from collector.storage.rows import SpanRow, plain_rows, run_rows, span_rows
from collector.storage.span_rows import Sender

# The steps a decode job times (CPU seconds of the decoding thread), in order.
STAGES = ("decode", "recognise", "rows", "assemble")


@dataclass(frozen=True, slots=True)
class Recognising:
    """What a decoder classifies spans with: the compiled conventions, and
    the attribute keys they and run assembly read, lifted in the one pass
    over a span's attributes at decode (CONVENTIONS.md section 8)."""

    conventions: ConventionSet
    selection: proto.Selection


def recognising(conventions: ConventionSet) -> Recognising:
    """The decoders' conventions with the selection reclassification uses too
    (collector.assembly.recognise), so a stored span decodes as it did."""
    return Recognising(conventions, selection(conventions))


@dataclass(frozen=True, slots=True)
class DecodeJob:
    body: bytes
    content: str  # the codec's name (proto.codecs): "protobuf" or "json"
    gzip: bool
    max_bytes: int
    limits: proto.Limits
    sender: Sender
    timers: Timers = Timers()


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
    cpu_s: dict[str, float] = field(default_factory=dict)  # stage -> CPU seconds (STAGES)

    # From the decoder process to the server: rows travel as plain tuples,
    # which pickle in C; named rows would cost a Python call each way per
    # row. storage.rows owns both directions.
    def __getstate__(self) -> tuple[Any, ...]:
        runs = {trace: plain_rows(rows) for trace, rows in self.runs.items()}
        return (
            plain_rows(self.rows),
            self.agents,
            self.resources,
            self.rejected,
            self.reasons,
            runs,
            self.memory_bytes,
            self.cpu_s,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (
            rows,
            self.agents,
            self.resources,
            self.rejected,
            self.reasons,
            runs,
            self.memory_bytes,
            self.cpu_s,
        ) = state
        self.rows = span_rows(rows)
        self.runs = {trace: run_rows(plain) for trace, plain in runs.items()}


def decode_job(job: DecodeJob, using: Recognising) -> DecodedRows:
    """The job runner: wire decoding, recognition, rows, pre-assembly, in
    turn, each step's CPU time kept for the stage figures (bench/ingest.py
    --stages)."""
    clock = time.thread_time
    began = clock()
    try:
        decoded = proto.decode_body(
            job.body,
            job.content,
            gzip=job.gzip,
            max_bytes=job.max_bytes,
            selection=using.selection,
            limits=job.limits,
        )
    except proto.TooLarge as exc:
        raise PayloadTooLarge(str(exc)) from None
    except proto.DecodeError as exc:
        raise BadRequest(str(exc)) from None
    spans, sender = decoded.spans, job.sender
    decoded_at = clock()
    readings = recognise(spans, using.conventions, sender.owner)
    recognised_at = clock()
    built = build_rows(spans, readings, sender)
    built_at = clock()
    runs = preassemble(
        built.rows, readings.facts, sender.received_at, job.timers, using.conventions.digest
    )
    done = clock()
    return DecodedRows(
        rows=built.rows,
        agents=built.agents,
        resources=built.resources,
        rejected=decoded.rejected,
        reasons=dict(decoded.reasons),
        runs=runs,
        memory_bytes=built.memory_bytes,
        cpu_s={
            "decode": decoded_at - began,
            "recognise": recognised_at - decoded_at,
            "rows": built_at - recognised_at,
            "assemble": done - built_at,
        },
    )


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
