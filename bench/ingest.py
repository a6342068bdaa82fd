"""Durable spans/s through OTLP/HTTP and OTLP/gRPC (issue: ingestion benchmark).

    python bench/ingest.py [--requests 200] [--rounds 3] [--growing]
                           [--store sqlite|postgresql] [--processes N] [--database-url URL]

Starts real collector processes (N of them, sharing one database) on a fresh
database per round, drives them with 4 concurrent senders of pre-encoded
512-span requests (sender i talks to process i mod N), and measures from the
first send to the last acknowledgement (an OK is only sent after commit, so
that is the last durable span), then checks every span is stored.
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
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.payloads import build_requests  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import (  # noqa: E402
    ExportRefused,
    OtlpClient,
    ServerProcess,
    cli,
    start_server,
)

SENDERS = int(__import__("os").environ.get("BENCH_SENDERS", "4"))


def drive(door: str, servers: list[ServerProcess], key: str, bodies: list[bytes]) -> float:
    queue = list(range(len(bodies)))
    lock = threading.Lock()
    failures: list[str] = []

    def sender(server: ServerProcess) -> None:
        client = OtlpClient(server, key, timeout=60)
        while True:
            with lock:
                if not queue:
                    break
                index = queue.pop()
            try:
                client.export(bodies[index], door)
            except ExportRefused as exc:
                failures.append(str(exc))
        client.close()

    threads = [
        threading.Thread(target=sender, args=(servers[i % len(servers)],)) for i in range(SENDERS)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} requests failed: {failures[0]}")
    return elapsed


def one_round(
    door: str, bodies: list[bytes], database_url: str, processes: int, stored_before: int = 0
) -> float:
    cli("db", "upgrade", "--database-url", database_url)  # keys create makes no database
    key = cli("keys", "create", "--owner", "bench", "--database-url", database_url).stdout
    servers = [start_server(database_url) for _ in range(processes)]
    try:
        elapsed = drive(door, servers, key.strip(), bodies)
    finally:
        for server in servers:
            server.stop()
    engine = create_engine(database_url)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
    engine.dispose()
    spans = len(bodies) * 512
    if stored != stored_before + spans:
        raise SystemExit(f"stored {stored - stored_before} spans, sent {spans}")
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
    args = parser.parse_args()
    if args.paired and (args.database_url or not args.growing):
        parser.error("--paired needs --growing and a store of its own (no --database-url)")
    bodies = build_requests(args.requests)
    store = args.database_url.split(":")[0] if args.database_url else args.store
    print(
        f"{store}, {args.processes} collector process(es): {args.requests} requests x 512 "
        f"spans, {len(bodies[0]) / 512:.0f} B/span, {SENDERS} senders, {args.rounds} rounds"
    )
    with ExitStack() as stack:
        cluster = None
        if args.store == "postgresql" and not args.database_url:
            cluster = stack.enter_context(PostgresCluster(durable=True))
        databases = fresh_databases(args.store, args.database_url, stack, cluster)
        references = fresh_databases(args.store, None, stack, cluster) if args.paired else None
        for door in args.doors.split(","):
            if args.growing:
                growing(door, args, databases(), references)
                continue
            rates = [
                one_round(door, bodies, databases(), args.processes) for _ in range(args.rounds)
            ]
            print(
                f"OTLP/{door.upper():4} durable spans/s: median {statistics.median(rates):,.0f} "
                f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
            )


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
        rates.append(one_round(door, bodies, database_url, args.processes, stored))
        stored += len(bodies) * 512
        line = (
            f"OTLP/{door.upper():4} durable spans/s: {rates[-1]:,.0f} with {stored:,} spans "
            f"stored ({rates[-1] / rates[0]:.0%} of the first round)"
        )
        if references is not None:
            empty = one_round(door, bodies, references(), args.processes)
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
