"""Overload: ten times the sustainable rate for three minutes, both doors at once.

    python bench/overload.py [--factor 10] [--minutes 3] [--retries off,on]
                             [--store sqlite|postgresql] [--pool 3000]
                             [--attacks on|off|only]

First measures the sustainable rate in the same run: 4 senders (2 per door)
sending 512-span requests as fast as they are answered for 30 s on a fresh
database. Then, per retry mode, starts a collector with its default
settings on a fresh database and offers `--factor` times that rate for
`--minutes`, open loop: requests leave on a fixed schedule (half OTLP/HTTP,
half OTLP/gRPC) whatever the answers, from up to SENDERS threads; a
request that could not leave within a second of its time is counted as not
offered. With retries on, a refused request is retried as the OpenTelemetry
SDK exporters do (their grpc exporter.py): after the Retry-After / RetryInfo
delay (1 s), at most 6 attempts within the 10 s export timeout, then given
up. A reader asks /agents and /stats twice a second throughout and for 30 s
after.

Prints per mode: offered and acknowledged spans/s, answers by kind, answer
times (accepted and refused apart), peak RSS of the server and its decoder
processes, acknowledged against stored spans, and the reads' answers and
times during and after. Bodies are drawn from a pool of `--pool` distinct
requests; one accepted twice is stored once, so "stored" is checked per
distinct acknowledged request (every span of each is stored).

Then (`--attacks on`, the default; `only` skips the flood) one row per door
attack of issue 29 (bench/door_attacks.py): gRPC streams that never send
their message, with and without a key; uploads that declare 16 MiB and send
one byte, keyed and under --insecure; 1,500 connections that send nothing
or trickle a head at a 1,024-descriptor limit. Each row: what a victim's
exports and health checks got meanwhile, what became of the attacker's
streams or connections, and the bytes the server logged.
"""

from __future__ import annotations

import argparse
import heapq
import os
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.door_attacks import attack_rows, print_rows  # noqa: E402
from bench.ingest import fresh_databases  # noqa: E402
from bench.payloads import build_requests  # noqa: E402
from bench.support.servers import (  # noqa: E402
    HTTP_TRANSPORT_ERRORS,
    ExportRefused,
    MemorySampler,
    OtlpClient,
    ServerProcess,
    cli,
    process_tree,
    start_server,
)

SPANS_PER_REQUEST = 512
SENDERS = 96
CALIBRATION_S = float(os.environ.get("BENCH_CALIBRATION_S", "30"))
READS_AFTER_S = 30.0
DRAIN_LIMIT_S = 600.0
# The OpenTelemetry Python SDK's exporters (exporter/otlp/proto/grpc/exporter.py):
# 6 attempts, the server's RetryInfo delay between them, within a 10 s timeout.
SDK_ATTEMPTS, SDK_TIMEOUT_S, RETRY_DELAY_S = 6, 10.0, 1.0


@dataclass
class Flood:
    answers: Counter[str] = field(default_factory=Counter)
    accepted_s: list[float] = field(default_factory=list)
    refused_s: list[float] = field(default_factory=list)
    acked: set[int] = field(default_factory=set)  # pool indexes
    acks: int = 0  # acknowledged requests, repeats included
    refused: set[int] = field(default_factory=set)  # pool indexes refused at least once
    gave_up: set[int] = field(default_factory=set)  # retries exhausted, as an SDK drops them
    late: int = 0  # not offered: no sender free within a second of its time
    offered: int = 0  # requests sent, retries included
    retried: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Reads:
    during: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)


def send(client: OtlpClient, body: bytes, door: str) -> str:
    try:
        client.export(body, door)
    except ExportRefused as exc:
        return f"http {str(exc)[:3]}"
    except grpc.RpcError as exc:
        return f"grpc {exc.code().name}"
    except HTTP_TRANSPORT_ERRORS as exc:
        return f"transport {type(exc).__name__}"
    return "ok"


def calibrate(url: str, key: str, bodies: list[bytes]) -> float:
    """Acknowledged spans/s of 4 closed-loop senders, 2 per door."""
    server = start_server(url)
    done = time.monotonic() + CALIBRATION_S
    acked = [0]
    lock = threading.Lock()
    cursor = [0]

    def sender(door: str) -> None:
        client = OtlpClient(server, key, timeout=120)
        while time.monotonic() < done:
            with lock:
                index = cursor[0] % len(bodies)
                cursor[0] += 1
            if send(client, bodies[index], door) == "ok":
                with lock:
                    acked[0] += 1
        client.close()

    started = time.monotonic()
    threads = [threading.Thread(target=sender, args=(d,)) for d in ("http", "grpc") * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    server.stop()
    return acked[0] * SPANS_PER_REQUEST / elapsed


def flood(
    server: ServerProcess,
    key: str,
    bodies: list[bytes],
    rate_spans: float,
    seconds: float,
    retries: bool,
) -> Flood:
    """Requests on a fixed schedule for `seconds`; with retries, refused ones
    again after a second, until all are accepted (or DRAIN_LIMIT_S)."""
    result = Flood()
    interval = SPANS_PER_REQUEST / rate_spans
    start = time.monotonic()
    total = int(seconds / interval)
    ticket = [0]
    retry_heap: list[tuple[float, int, int, float]] = []  # (due, index, attempt, first try)

    def next_job() -> tuple[float, int, int, float] | None:
        with result.lock:
            now = time.monotonic()
            if retry_heap and retry_heap[0][0] <= now:
                return heapq.heappop(retry_heap)
            if ticket[0] < total:
                k = ticket[0]
                ticket[0] += 1
                due = start + k * interval
                return due, k % len(bodies), 0, due
            if retries and retry_heap:
                return now + 0.05, -1, 0, now  # wait for a retry to come due
            return None

    def sender(door: str) -> None:
        client = OtlpClient(server, key, timeout=120)
        while (job := next_job()) is not None:
            due, index, attempt, first = job
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            if index < 0:
                continue
            if attempt == 0 and time.monotonic() - due > 1.0:
                with result.lock:
                    result.late += 1
                continue
            began = time.monotonic()
            kind = send(client, bodies[index], door)
            took = time.monotonic() - began
            with result.lock:
                result.offered += 1
                result.retried += attempt > 0
                result.answers[kind] += 1
                if kind == "ok":
                    result.accepted_s.append(took)
                    result.acked.add(index)
                    result.acks += 1
                else:
                    result.refused_s.append(took)
                    result.refused.add(index)
                    again = time.monotonic() + RETRY_DELAY_S
                    if retries and attempt + 1 < SDK_ATTEMPTS and again - first < SDK_TIMEOUT_S:
                        heapq.heappush(retry_heap, (again, index, attempt + 1, first))
                    elif retries:
                        result.gave_up.add(index)
            if time.monotonic() - start > seconds + DRAIN_LIMIT_S:
                break
        client.close()

    threads = [
        threading.Thread(target=sender, args=("http" if i % 2 else "grpc",)) for i in range(SENDERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return result


def read_loop(server: ServerProcess, key: str, reads: Reads, phase: list[str]) -> None:
    http = httpx.Client(
        base_url=f"http://127.0.0.1:{server.http_port}",
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    )
    while phase[0] != "stop":
        began = time.monotonic()
        try:
            agents = http.get("/api/v1/agents")
            status = agents.status_code
            if status == 200 and agents.json()["items"]:
                ident = agents.json()["items"][0]["id"]
                status = http.get(f"/api/v1/agents/{ident}/stats").status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__  # type: ignore[assignment]
        took = time.monotonic() - began
        if status != 200:
            reads.failures[f"{phase[0]} {status}"] += 1
        else:
            (reads.during if phase[0] == "during" else reads.after).append(took)
        time.sleep(max(0.0, 0.5 - took))
    http.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants (live ones)."""
    total = 0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    at = lambda share: ordered[min(len(ordered) - 1, int(share * len(ordered)))]  # noqa: E731
    return (
        f"p50 {at(0.5) * 1000:,.0f} ms, p90 {at(0.9) * 1000:,.0f}, p99 {at(0.99) * 1000:,.0f}, "
        f"max {ordered[-1] * 1000:,.0f}"
    )


def stored_of(url: str, bodies: list[bytes], acked: set[int]) -> tuple[int, int]:
    """(spans stored, spans of acknowledged requests that are missing)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    engine = create_engine(url)
    with engine.connect() as conn:
        stored = {row[0] for row in conn.execute(text("SELECT span_id FROM spans"))}
    engine.dispose()
    missing = 0
    for index in acked:
        message = ExportTraceServiceRequest.FromString(bodies[index])
        for scope in message.resource_spans[0].scope_spans:
            missing += sum(1 for s in scope.spans if s.span_id.hex() not in stored)
    return len(stored), missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--factor", type=float, default=10.0)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--retries", default="off,on")
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--pool", type=int, default=3000, help="distinct requests to send")
    parser.add_argument("--attacks", choices=["on", "off", "only"], default="on")
    args = parser.parse_args()
    failed = False
    with ExitStack() as stack:
        databases = fresh_databases(args.store, None, stack)
        if args.attacks != "off":
            print_rows(attack_rows(databases))
        if args.attacks == "only":
            return
        bodies = build_requests(args.pool)

        def fresh() -> tuple[str, str]:
            url = databases()
            cli("db", "upgrade", "--database-url", url)  # keys create makes no database
            key = cli("keys", "create", "--owner", "flood", "--database-url", url).stdout.strip()
            return url, key

        sustainable = calibrate(*fresh(), bodies)
        rate = args.factor * sustainable
        print(
            f"{args.store}, defaults: sustainable {sustainable:,.0f} spans/s (4 closed-loop "
            f"senders, {CALIBRATION_S:.0f} s); offering {rate:,.0f} spans/s "
            f"({args.factor:g}x) for {args.minutes:g} min, both doors, {SENDERS} senders"
        )
        for mode in args.retries.split(","):
            url, key = fresh()
            server = start_server(url)
            sampler = MemorySampler(server.proc.pid, every_s=0.05)
            sampler.start()
            reads, phase = Reads(), ["during"]
            reader = threading.Thread(target=read_loop, args=(server, key, reads, phase))
            reader.start()
            began, server_cpu, own_cpu = (
                time.monotonic(),
                cpu_seconds(server.proc.pid),
                time.process_time(),
            )
            result = flood(server, key, bodies, rate, args.minutes * 60, mode == "on")
            elapsed = time.monotonic() - began
            server_cores = (cpu_seconds(server.proc.pid) - server_cpu) / elapsed
            own_cores = (time.process_time() - own_cpu) / elapsed
            phase[0] = "after"
            time.sleep(READS_AFTER_S)
            phase[0] = "stop"
            reader.join()
            sampler.stop()
            alive = server.proc.poll() is None
            server.stop()
            stored, missing = stored_of(url, bodies, result.acked)
            failed |= missing > 0 or not alive
            first = (result.offered - result.retried) * SPANS_PER_REQUEST / (args.minutes * 60)
            print(f"\nretries {mode}: {elapsed:,.0f} s")
            print(
                f"  offered {first:,.0f} spans/s in first attempts (+{result.retried:,} retries), "
                f"{result.late:,} requests not offered (no sender free); acknowledged "
                f"{result.acks * SPANS_PER_REQUEST / elapsed:,.0f} spans/s"
            )
            print(
                f"  CPU: server + decoders {server_cores:.2f} cores, this load generator "
                f"{own_cores:.2f} (of the machine's {os.cpu_count()})"
            )
            print(
                "  answers: " + ", ".join(f"{k} {n:,}" for k, n in sorted(result.answers.items()))
            )
            print(f"  accepted answer time: {percentiles(result.accepted_s)}")
            print(f"  refused answer time:  {percentiles(result.refused_s)}")
            print(f"  peak RSS, server + decoders: {sampler.peak / 2**20:,.0f} MB")
            print(
                f"  {len(result.acked):,} distinct requests acknowledged "
                f"({len(result.acked) * SPANS_PER_REQUEST:,} spans); stored {stored:,} spans; "
                f"acknowledged but missing: {missing}"
            )
            print(
                f"  reads during: {len(reads.during)} answered, {percentiles(reads.during)}; "
                f"after: {len(reads.after)}, {percentiles(reads.after)}; failures "
                f"{dict(reads.failures) or 'none'}; server {'alive' if alive else 'DEAD'}"
            )
            if mode == "on":
                print(
                    f"  given up after the SDK's retries: {len(result.gave_up):,} requests; "
                    f"refused then accepted on a retry: {len(result.refused & result.acked):,}"
                )
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
