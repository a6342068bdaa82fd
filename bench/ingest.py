"""Durable spans/s through OTLP/HTTP and OTLP/gRPC (issue: ingestion benchmark).

    python bench/ingest.py [--requests 200] [--rounds 3] [--growing]
                           [--store sqlite|postgresql] [--processes N] [--database-url URL]
                           [--senders 4] [--retry] [--naive] [--stages]

Starts real collector processes (N of them, sharing one database) on a fresh
database per round, drives them with `--senders` concurrent senders of
pre-encoded 512-span requests (sender i talks to process i mod N), and
measures from the first send to the last acknowledgement (an OK is only
sent after commit, so that is the last durable span), then checks every
span is stored. A refused request fails the bench, unless `--retry`: then
it is retried as the OpenTelemetry SDK exporters do (bench/support/
sdk_retry.py), and the refusals are counted and printed. `--naive` runs the
naive pipeline (bench/naive_pipeline.py) on the same requests before each
round, and prints its median and the collector's ratio to it: the machine
drifts, so only a ratio of one sitting says much. `--stages` prints, per
door, the CPU microseconds per span of each step of the path (medians over
the rounds; bench/support/stages.py says what each step holds).
`--store postgresql` starts a throwaway cluster with PostgreSQL's durable
defaults (fsync, synchronous_commit on) for the whole benchmark.
`--growing` keeps one database for all rounds of a door (new spans each
round), to show how the rate holds up as the tables grow. `--paired` adds,
after each growing round, the same requests into an empty database: the
ratio of the two is the cost of the stored data alone, since both rounds
ran within a minute of each other (the machine's speed drifts by 15% and
more between hours, which the ratio to the first round cannot tell apart).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import naive_pipeline  # noqa: E402
from bench.payloads import build_requests  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.sdk_retry import export_like_sdk  # noqa: E402
from bench.support.servers import (  # noqa: E402
    ExportRefused,
    OtlpClient,
    ServerProcess,
    cli,
    start_server,
)
from bench.support.stages import STAGES, per_span_us, snapshot  # noqa: E402

SENDERS = int(os.environ.get("BENCH_SENDERS", "4"))


@dataclass
class Drive:
    """How one round's requests were answered."""

    refusals: int = 0  # retryable refusals (--retry), each followed by a retry or a give-up
    given_up: list[int] = field(default_factory=list)  # request indexes the SDK would drop
    failures: list[str] = field(default_factory=list)


def drive(
    door: str,
    servers: list[ServerProcess],
    key: str,
    bodies: list[bytes],
    senders: int = SENDERS,
    retry: bool = False,
) -> tuple[float, Drive]:
    queue = list(range(len(bodies)))
    lock = threading.Lock()
    result = Drive()

    def sender(server: ServerProcess) -> None:
        client = OtlpClient(server, key, timeout=60)
        while True:
            with lock:
                if not queue:
                    break
                index = queue.pop()
            try:
                if not retry:
                    client.export(bodies[index], door)
                    continue
                outcome = export_like_sdk(client, bodies[index], door)
                with lock:
                    result.refusals += outcome.refusals
                    if not outcome.delivered:
                        result.given_up.append(index)
            except (ExportRefused, grpc.RpcError) as exc:
                with lock:
                    result.failures.append(str(exc))
        client.close()

    threads = [
        threading.Thread(target=sender, args=(servers[i % len(servers)],)) for i in range(senders)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if result.failures:
        raise SystemExit(f"{len(result.failures)} requests failed: {result.failures[0]}")
    return elapsed, result


def one_round(
    door: str,
    bodies: list[bytes],
    database_url: str,
    processes: int,
    stored_before: int = 0,
    senders: int = SENDERS,
    retry: bool = False,
    stages: list[dict[str, float]] | None = None,
) -> float:
    cli("db", "upgrade", "--database-url", database_url)  # keys create makes no database
    key = cli("keys", "create", "--owner", "bench", "--database-url", database_url).stdout
    servers = [start_server(database_url) for _ in range(processes)]
    try:
        before = [snapshot(s.proc.pid, s.http_port) for s in servers] if stages is not None else []
        elapsed, result = drive(door, servers, key.strip(), bodies, senders, retry)
        if stages is not None:  # one process's figures: each had its share of the spans
            after = snapshot(servers[0].proc.pid, servers[0].http_port)
            share = len(bodies) * 512 // len(servers)
            stages.append(per_span_us(before[0], after, share))
    finally:
        for server in servers:
            server.stop()
    engine = create_engine(database_url)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
    engine.dispose()
    spans = (len(bodies) - len(result.given_up)) * 512
    if retry:
        print(
            f"  OTLP/{door.upper():4} {len(bodies)} requests: {result.refusals} refusals "
            f"retried, {len(result.given_up)} given up after the SDK's retries",
            flush=True,
        )
    if stored != stored_before + spans:
        raise SystemExit(f"stored {stored - stored_before} spans, acknowledged {spans}")
    return spans / elapsed


def fresh_databases(
    store: str, url: str | None, stack: ExitStack, cluster: PostgresCluster | None = None
) -> Callable[[], str]:
    """Where each round writes: an empty database every time (the one before
    is removed; a second lane on the same cluster keeps its own)."""
    if url:
        return lambda: _emptied(url)
    if store == "postgresql":
        server = cluster or stack.enter_context(PostgresCluster(durable=True))
        previous: list[str] = []

        def next_database() -> str:
            while previous:  # as below: no writeback of the last round during this one
                server.drop_database(previous.pop())
            previous.append(server.create_database())
            return previous[-1]

        return next_database
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    names = iter(range(1_000_000))

    def next_file() -> str:
        # The last round's files go first: the kernel would otherwise still be
        # writing their ~150 MB back while this round waits on fsync.
        for old in tmp.iterdir():
            old.unlink()
        return f"sqlite:///{tmp / f'bench-{next(names)}.db'}"

    return next_file


def _emptied(url: str) -> str:
    """A given server database, emptied (after migrating it) for the next round."""
    cli("db", "upgrade", "--database-url", url)
    engine = create_engine(url)
    with engine.begin() as conn:
        for table in ("spans", "runs", "agents", "keys", "traces", "resources", "pending_traces"):
            conn.execute(text(f"DELETE FROM {table}"))
    engine.dispose()
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--database-url", default=None, help="an existing database (emptied)")
    parser.add_argument("--doors", default="http,grpc")
    parser.add_argument("--growing", action="store_true", help="one database for all rounds")
    parser.add_argument(
        "--paired", action="store_true", help="--growing: each round again into an empty database"
    )
    parser.add_argument("--senders", type=int, default=SENDERS, help="concurrent exporters")
    parser.add_argument(
        "--retry", action="store_true", help="retry refusals as the OTel SDK exporters do"
    )
    parser.add_argument(
        "--naive", action="store_true", help="the naive pipeline before each round, and the ratio"
    )
    parser.add_argument(
        "--stages", action="store_true", help="CPU microseconds per span of each step, per door"
    )
    args = parser.parse_args()
    if args.paired and (args.database_url or not args.growing):
        parser.error("--paired needs --growing and a store of its own (no --database-url)")
    if args.naive and args.growing:
        parser.error("--naive compares empty stores: not with --growing")
    bodies = build_requests(args.requests)
    store = args.database_url.split(":")[0] if args.database_url else args.store
    print(
        f"{store}, {args.processes} collector process(es): {args.requests} requests x 512 "
        f"spans, {len(bodies[0]) / 512:.0f} B/span, {args.senders} senders"
        f"{' retrying as the SDK' if args.retry else ''}, {args.rounds} rounds",
        flush=True,
    )
    with ExitStack() as stack:
        cluster = None
        if args.store == "postgresql" and not args.database_url:
            cluster = stack.enter_context(PostgresCluster(durable=True))
        databases = fresh_databases(args.store, args.database_url, stack, cluster)
        references = fresh_databases(args.store, None, stack, cluster) if args.paired else None
        doors = args.doors.split(",")
        if args.growing:
            for door in doors:
                growing(door, args, databases(), references)
            return
        # Round by round, the naive pipeline and each door in turn: as close
        # in time as the machine allows, so that their ratio holds.
        naive: list[float] = []
        rates: dict[str, list[float]] = {door: [] for door in doors}
        cpu: dict[str, list[dict[str, float]]] = {door: [] for door in doors}
        for _ in range(args.rounds):
            if args.naive:
                naive.extend(naive_pipeline.rates(bodies, 1))
                print(f"  naive pipeline {naive[-1]:,.0f} spans/s", flush=True)
            for door in doors:
                rate = one_round(
                    door,
                    bodies,
                    databases(),
                    args.processes,
                    0,
                    args.senders,
                    args.retry,
                    cpu[door] if args.stages else None,
                )
                rates[door].append(rate)
                print(f"  OTLP/{door.upper():4} {rate:,.0f} spans/s", flush=True)
        if naive:
            print(
                f"naive pipeline: median {statistics.median(naive):,.0f} spans/s "
                f"(runs: {', '.join(f'{r:,.0f}' for r in naive)})"
            )
        for door in doors:
            median = statistics.median(rates[door])
            ratio = ""
            if naive:
                ratio = f"; {median / statistics.median(naive):.2f}x the naive pipeline"
            print(
                f"OTLP/{door.upper():4} durable spans/s: median {median:,.0f} "
                f"(runs: {', '.join(f'{r:,.0f}' for r in rates[door])}){ratio}"
            )
        for door in doors:
            if cpu[door]:
                print(stage_line(door, cpu[door]))


def stage_line(door: str, rounds: list[dict[str, float]]) -> str:
    """Median CPU us/span of each step over the rounds, and their sum."""
    medians = {stage: statistics.median(r[stage] for r in rounds) for stage in STAGES}
    steps = ", ".join(f"{stage} {us:.1f}" for stage, us in medians.items())
    return f"OTLP/{door.upper():4} CPU us/span: {steps}; total {sum(medians.values()):.1f}"


def growing(
    door: str,
    args: argparse.Namespace,
    database_url: str,
    references: Callable[[], str] | None = None,
) -> None:
    """Rounds of new spans into one database: the rate as the tables grow;
    with `references`, each round's requests again into an empty database."""
    stored = 0
    rates: list[float] = []
    paired: list[float] = []
    for index in range(args.rounds):  # built per round: 5M spans of requests are ~5 GB
        bodies = build_requests(args.requests, seed=100 + index)
        rates.append(
            one_round(door, bodies, database_url, args.processes, stored, args.senders, args.retry)
        )
        stored += len(bodies) * 512
        line = (
            f"OTLP/{door.upper():4} durable spans/s: {rates[-1]:,.0f} with {stored:,} spans "
            f"stored ({rates[-1] / rates[0]:.0%} of the first round)"
        )
        if references is not None:
            empty = one_round(
                door, bodies, references(), args.processes, 0, args.senders, args.retry
            )
            paired.append(rates[-1] / empty)
            line += f"; {empty:,.0f} into an empty store just after ({paired[-1]:.0%})"
        print(line, flush=True)
    # One round swings by 15% on these machines: the last three together.
    last = statistics.median(rates[-3:])
    print(
        f"OTLP/{door.upper():4} median of the last 3 rounds: {last:,.0f} spans/s = "
        f"{last / rates[0]:.0%} of the first round, {last / statistics.median(rates[:3]):.0%} "
        "of the first three"
    )
    if paired:
        print(
            f"OTLP/{door.upper():4} against an empty store just after: median of the last 3 "
            f"rounds {statistics.median(paired[-3:]):.0%}, of all {statistics.median(paired):.0%}"
        )


if __name__ == "__main__":
    main()
