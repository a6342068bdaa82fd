"""A flood at default settings: refusals, memory, answer times, nothing lost.

    python bench/overload.py [--traces 60000] [--senders 32] [--retries]
                             [--store sqlite|postgresql]

Starts one collector process with its default settings and lets `--senders`
threads (half OTLP/HTTP, half OTLP/gRPC) send `--traces` traces of 9 spans
each in 512-span requests as fast as the collector answers: with retries
off every refused request is dropped (as an exporter whose retries are
off), with `--retries` it is sent again after its Retry-After until
accepted. Samples the RSS of the server and its decoder processes every
50 ms and prints: answers by kind, answer-time percentiles, peak RSS, and
whether every acknowledged span is stored (and, with retries, every span).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import grpc
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.payloads import build_requests  # noqa: E402
from tests.integration.processes import (  # noqa: E402
    HTTP_TRANSPORT_ERRORS,
    ExportRefused,
    MemorySampler,
    OtlpClient,
    ServerProcess,
    cli,
    start_server,
)
from tests.postgres import PostgresCluster  # noqa: E402

SPANS_PER_REQUEST = 512
SPANS_PER_TRACE = 9  # bench/payloads.py


def flood(
    server: ServerProcess, key: str, bodies: list[bytes], senders: int, retries: bool
) -> tuple[dict[str, int], list[float], set[int]]:
    """Send every body once (or until accepted); answers by kind, answer times,
    indexes of the bodies acknowledged."""
    queue = list(range(len(bodies)))
    lock = threading.Lock()
    answers: dict[str, int] = {}
    times: list[float] = []
    acked: set[int] = set()

    def sender(door: str) -> None:
        client = OtlpClient(server, key, timeout=120)
        while True:
            with lock:
                if not queue:
                    break
                index = queue.pop()
            while True:
                started = time.perf_counter()
                kind, retry_after = "ok", 0.0
                try:
                    client.export(bodies[index], door)
                except ExportRefused as exc:
                    kind, retry_after = f"http {str(exc)[:3]}", 1.0
                except grpc.RpcError as exc:
                    kind, retry_after = f"grpc {exc.code().name}", 1.0
                except HTTP_TRANSPORT_ERRORS as exc:
                    kind, retry_after = f"transport {type(exc).__name__}", 1.0
                elapsed = time.perf_counter() - started
                with lock:
                    answers[kind] = answers.get(kind, 0) + 1
                    times.append(elapsed)
                    if kind == "ok":
                        acked.add(index)
                if kind == "ok" or not retries:
                    break
                time.sleep(retry_after)
        client.close()

    threads = [
        threading.Thread(target=sender, args=("http" if i % 2 else "grpc",)) for i in range(senders)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers, times, acked


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=60_000)
    parser.add_argument("--senders", type=int, default=32)
    parser.add_argument("--retries", action="store_true")
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    count = max(1, args.traces * SPANS_PER_TRACE // SPANS_PER_REQUEST)
    bodies = build_requests(count)
    with ExitStack() as stack:
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster(durable=True)).create_database()
        else:
            url = f"sqlite:///{stack.enter_context(tempfile.TemporaryDirectory())}/flood.db"
        key = cli("keys", "create", "--owner", "flood", "--database-url", url).stdout.strip()
        server = start_server(url)
        sampler = MemorySampler(server.proc.pid, every_s=0.05)
        sampler.start()
        started = time.perf_counter()
        try:
            answers, times, acked = flood(server, key, bodies, args.senders, args.retries)
        finally:
            elapsed = time.perf_counter() - started
            sampler.stop()
            server.stop()
        engine = create_engine(url)
        with engine.connect() as conn:
            stored = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
        engine.dispose()
    sent = len(bodies) * SPANS_PER_REQUEST
    print(
        f"{args.store}, defaults, {args.senders} senders, retries "
        f"{'on' if args.retries else 'off'}: {len(bodies)} requests x {SPANS_PER_REQUEST} "
        f"spans ({sent:,} spans) in {elapsed:.1f} s"
    )
    print("answers: " + ", ".join(f"{kind} {n}" for kind, n in sorted(answers.items())))
    print(
        f"answer time: p50 {percentile(times, 0.5):.2f} s, p99 {percentile(times, 0.99):.2f} s, "
        f"max {max(times):.2f} s"
    )
    print(f"peak RSS, server + decoders: {sampler.peak / 2**20:,.0f} MB")
    acked_spans = len(acked) * SPANS_PER_REQUEST
    print(f"acknowledged {acked_spans:,} spans, stored {stored:,}")
    if stored < acked_spans or (args.retries and stored != sent):
        raise SystemExit("acknowledged spans are missing")


if __name__ == "__main__":
    main()
