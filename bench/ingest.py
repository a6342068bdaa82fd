"""Durable spans/s through OTLP/HTTP and OTLP/gRPC (issue: ingestion benchmark).

    python bench/ingest.py [--requests 200] [--rounds 3] [--database-url URL]

Starts a real collector process on a fresh database per round, drives it with
4 concurrent senders of pre-encoded 512-span requests, and measures from the
first send to the last acknowledgement (an OK is only sent after commit, so
that is the last durable span), then checks every span is stored.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc
import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.payloads import build_requests  # noqa: E402
from tests.integration.processes import cli, start_server  # noqa: E402

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SENDERS = int(__import__("os").environ.get("BENCH_SENDERS", "4"))


def drive(door: str, port: int, key: str, bodies: list[bytes]) -> float:
    queue = list(range(len(bodies)))
    lock = threading.Lock()
    failures: list[str] = []

    def sender() -> None:
        client = httpx.Client(timeout=60)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        call = channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
        while True:
            with lock:
                if not queue:
                    break
                index = queue.pop()
            if door == "http":
                reply = client.post(
                    f"http://127.0.0.1:{port}/v1/traces",
                    content=bodies[index],
                    headers={
                        "content-type": "application/x-protobuf",
                        "authorization": f"Bearer {key}",
                    },
                )
                if reply.status_code != 200:
                    failures.append(reply.text)
            else:
                call(bodies[index], metadata=[("authorization", f"Bearer {key}")], timeout=60)
        client.close()
        channel.close()

    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} requests failed: {failures[0]}")
    return elapsed


def one_round(door: str, bodies: list[bytes], url: str | None, spans: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        database_url = url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        key = cli("keys", "create", "--owner", "bench", "--database-url", database_url).stdout
        server = start_server(database_url)
        try:
            elapsed = drive(
                door, server.grpc_port if door == "grpc" else server.http_port, key.strip(), bodies
            )
        finally:
            server.stop()
        engine = create_engine(database_url)
        with engine.connect() as conn:
            stored = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
            if url:  # a shared server database: leave it empty for the next round
                for table in ("spans", "runs", "agents", "keys"):
                    conn.execute(text(f"DELETE FROM {table}"))
                conn.commit()
        engine.dispose()
        if stored != spans:
            raise SystemExit(f"stored {stored} spans, sent {spans}")
        return spans / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--doors", default="http,grpc")
    args = parser.parse_args()
    bodies = build_requests(args.requests)
    spans = args.requests * 512
    print(
        f"{args.requests} requests x 512 spans, {len(bodies[0]) / 512:.0f} B/span, "
        f"{SENDERS} senders, {args.rounds} rounds"
    )
    for door in args.doors.split(","):
        rates = [one_round(door, bodies, args.database_url, spans) for _ in range(args.rounds)]
        print(
            f"OTLP/{door.upper():4} durable spans/s: median {statistics.median(rates):,.0f} "
            f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
        )


if __name__ == "__main__":
    main()
