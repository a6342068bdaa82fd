"""Admission that uses the machine (issue 39 item 3, docs/otlp.md "Overload").

At the default budget, 16 OpenTelemetry SDK exporters of one owner sending
the SDK's default batch (512 spans) got 503 on 18 to 160 of 395 requests
with nobody else sending: the owner's fixed share (16 MiB) was less than
16 batches in flight take. An owner alone now has the whole budget, and a
second owner arriving meanwhile still gets its exports in.

A real collector process at its defaults, real SDK exporters; every status
the exporters saw is recorded through their HTTP session. The test holds
the database's write lock while the first batches arrive, so that all 16
are in flight at once (decoded, waiting for their commit) however slowly
this process encodes them, then lets the commits go.
"""

from __future__ import annotations

import random
import re
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

from bench.payloads import run_spans
from bench.support.servers import cli, start_server
from tests.schemas import sqlite_copy_at_head

SENDERS, BATCHES, BATCH = 16, 3, 512  # the SDK's default max_export_batch_size
DEADLINE_S = 600.0  # a loaded two-core machine; the test waits for the answers, not a time
# Under the collector's 30 s SQLite busy timeout, past which a held commit fails.
LOCK_HELD_AT_MOST_S = 20.0


def batches(count: int, seed: int) -> list[list[ReadableSpan]]:
    """`count` batches of 512 agent spans (~1 KB each: bench/payloads.py's runs)."""
    rnd = random.Random(seed)
    resource = Resource.create({"service.name": f"fair-{seed}"})
    base = time.time_ns()
    spans: list[ReadableSpan] = []
    while len(spans) < count * BATCH:
        base += 50_000
        spans.extend(readable(span, resource) for span in run_spans(rnd, base))
    return [spans[i * BATCH : (i + 1) * BATCH] for i in range(count)]


def readable(span: Span, resource: Resource) -> ReadableSpan:
    def context(span_id: bytes) -> SpanContext:
        trace = int.from_bytes(span.trace_id, "big")
        return SpanContext(trace, int.from_bytes(span_id, "big"), False, TraceFlags(1))

    attributes = {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in span.attributes}
    return ReadableSpan(
        name=span.name,
        context=context(span.span_id),
        parent=context(span.parent_span_id) if span.parent_span_id else None,
        resource=resource,
        attributes=attributes,
        kind=SpanKind.INTERNAL,
        start_time=span.start_time_unix_nano,
        end_time=span.end_time_unix_nano,
    )


class Sender(threading.Thread):
    """One SDK exporter sending its batches in turn; what each try was answered."""

    def __init__(self, port: int, key: str, work: list[list[ReadableSpan]]) -> None:
        super().__init__(daemon=True)
        self.statuses: Counter[int] = Counter()
        self.results: list[SpanExportResult] = []
        session = requests.Session()
        session.hooks["response"].append(lambda reply, *_, **__: self._saw(reply.status_code))
        self._exporter = OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{port}/v1/traces",
            headers={"authorization": f"Bearer {key}"},
            timeout=DEADLINE_S,  # the SDK's 10 s is for answers, not for a loaded test machine
            session=session,
        )
        self._work = work
        self.first_answered = threading.Event()

    def _saw(self, status: int) -> None:
        self.statuses[status] += 1
        self.first_answered.set()

    def run(self) -> None:
        for batch in self._work:
            self.results.append(self._exporter.export(batch))
        self._exporter.shutdown()


def test_sixteen_sdk_exporters_of_one_owner_get_no_503_at_the_defaults_and_others_get_in(
    tmp_path: Path,
) -> None:
    db = tmp_path / "collector.db"
    url = sqlite_copy_at_head(db)
    keys = [cli("keys", "create", "--owner", o, "--database-url", url).stdout.strip() for o in "ab"]
    work = batches(SENDERS * BATCHES + BATCHES, seed=39)
    server = start_server(db)
    try:
        crowd = [
            Sender(server.http_port, keys[0], work[i * BATCHES : (i + 1) * BATCHES])
            for i in range(SENDERS)
        ]
        late = Sender(server.http_port, keys[1], work[SENDERS * BATCHES :])
        with sqlite3.connect(db, isolation_level=None) as lock:
            lock.execute("BEGIN IMMEDIATE")  # no commit until all 16 are in flight
            for sender in crowd:
                sender.start()
            deadline = time.monotonic() + LOCK_HELD_AT_MOST_S
            while time.monotonic() < deadline and not any(s.statuses for s in crowd):
                if spans_received(server.http_port) >= SENDERS * BATCH:
                    break
                time.sleep(0.05)
            lock.execute("ROLLBACK")
        assert crowd[0].first_answered.wait(DEADLINE_S)
        late.start()  # the second owner arrives while the first is sending
        for sender in [*crowd, late]:
            sender.join(DEADLINE_S)
            assert not sender.is_alive(), "an exporter did not finish"
    finally:
        server.stop()
    seen = sum((sender.statuses for sender in crowd), Counter())
    assert seen == {200: SENDERS * BATCHES}, seen
    assert late.results == [SpanExportResult.SUCCESS] * BATCHES, late.statuses
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    assert stored == (SENDERS + 1) * BATCHES * BATCH


def spans_received(port: int) -> float:
    """Spans the collector has decoded and accepted for a commit."""
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    return sum(
        float(v) for v in re.findall(r"^badge_spans_received_total\{[^}]*\} (\S+)$", text, re.M)
    )
