"""The naive pipeline the collector is measured against (issue 39 item 5).

    python bench/naive_pipeline.py [--requests 200] [--rounds 3]

One process, one thread, on the requests bench/ingest.py sends
(bench/payloads.py: 512 agent spans of ~1 KB each): parse each request
with protobuf (upb), turn every span and its attributes into Python dicts,
`json.dumps` the attributes, `executemany` the request's rows into a SQLite
table with one unique index on (owner, trace, span) (WAL,
`synchronous=FULL`, as the collector's default), and commit once per
request. Nothing else: no validation, no runs, no network. The time runs
from the first parse to the last commit, on a fresh database per round;
prints spans/s per round and the median. bench/ingest.py --naive measures it
in the same sitting as the collector and prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.payloads import build_requests  # noqa: E402

SCHEMA = """
CREATE TABLE spans (
    owner TEXT NOT NULL, trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
    parent_span_id TEXT, name TEXT NOT NULL, kind INTEGER, start_ns INTEGER,
    end_ns INTEGER, status_code INTEGER, status_message TEXT, service TEXT,
    scope TEXT, attributes TEXT NOT NULL
);
CREATE UNIQUE INDEX spans_key ON spans (owner, trace_id, span_id);
"""
INSERT = "INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def value_of(value: AnyValue) -> Any:
    """An attribute value as plain Python."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def attributes_of(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs}


def spans_of(body: bytes) -> list[dict[str, Any]]:
    """Every span of a request as a dict, its attributes a dict."""
    request = ExportTraceServiceRequest.FromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "start_ns": span.start_time_unix_nano,
                        "end_ns": span.end_time_unix_nano,
                        "status_code": span.status.code,
                        "status_message": span.status.message,
                        "service": resource.get("service.name"),
                        "scope": scope_spans.scope.name,
                        "attributes": attributes_of(span.attributes),
                    }
                )
    return spans


def one_round(bodies: list[bytes], folder: Path) -> float:
    """Spans/s of the naive pipeline into a fresh database in `folder`."""
    path = folder / f"naive-{time.monotonic_ns()}.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.executescript(SCHEMA)
    started = time.perf_counter()
    count = 0
    for body in bodies:
        rows = [
            (
                "bench",
                span["trace_id"],
                span["span_id"],
                span["parent_span_id"],
                span["name"],
                span["kind"],
                span["start_ns"],
                span["end_ns"],
                span["status_code"],
                span["status_message"],
                span["service"],
                span["scope"],
                json.dumps(span["attributes"]),
            )
            for span in spans_of(body)
        ]
        conn.execute("BEGIN")
        conn.executemany(INSERT, rows)
        conn.execute("COMMIT")  # one commit per request
        count += len(rows)
    elapsed = time.perf_counter() - started
    stored = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    conn.close()
    for leftover in folder.glob(f"{path.name}*"):
        leftover.unlink()
    if stored != count:
        raise SystemExit(f"naive pipeline stored {stored} spans of {count}")
    return count / elapsed


def rates(bodies: list[bytes], rounds: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        return [one_round(bodies, Path(tmp)) for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bodies = build_requests(args.requests)
    measured = rates(bodies, args.rounds)
    print(
        f"naive pipeline: {args.requests} requests x 512 spans, "
        f"{len(bodies[0]) / 512:.0f} B/span: median {statistics.median(measured):,.0f} spans/s "
        f"(rounds: {', '.join(f'{r:,.0f}' for r in measured)})"
    )


if __name__ == "__main__":
    main()
