"""Ingest while a backlog is reclassified (CONVENTIONS.md section 5: ingest
keeps at least 80% of its rate).

    python bench/reclassify.py [--backlog 150] [--requests 100] [--rounds 3]
                               [--store sqlite|postgresql]

Each round, on a fresh database: a collector stores `--backlog` requests of
512 spans (whole runs, bench/payloads.py) and stops. Then, one right after
the other (their order alternating between rounds, as the machine drifts):
- alone: a collector started on that store takes `--requests` more requests
  from 4 senders over OTLP/HTTP, durable spans/s measured as bench/ingest.py
  does;
- reclassifying: every stored run is marked as recognised under other
  conventions, a collector is started, and once its reclassification has
  begun it takes the same number of new requests. The reclassification must
  still be going when the last one is answered, or the round says so.
Prints each round, the medians of both and their ratio, and the runs
reclassified per second while ingest ran.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import drive  # noqa: E402
from bench.payloads import build_requests  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import cli, start_server  # noqa: E402


def sql(url: str, statement: str) -> int:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(statement))
            return int(result.scalar_one()) if result.returns_rows else int(result.rowcount)
    finally:
        engine.dispose()


def rate(url: str, key: str, bodies: list[bytes], reclassify: bool) -> str:
    """One measure: spans/s, and what reclassification did meanwhile."""
    if reclassify:
        sql(url, "UPDATE runs SET conventions_digest = 'stale-digest'")
    server = start_server(url)
    try:
        if reclassify:
            deadline = time.monotonic() + 30
            while server.metric("badge_runs_reclassify_remaining") == 0:
                if time.monotonic() > deadline:
                    raise SystemExit("reclassification did not start")
                time.sleep(0.02)
        before = server.metric("badge_runs_reclassified_total")
        elapsed, _ = drive("http", [server], key, bodies)
        done = server.metric("badge_runs_reclassified_total") - before
        left = server.metric("badge_runs_reclassify_remaining")
    finally:
        server.stop()
    spans = len(bodies) * 512 / elapsed
    if not reclassify:
        return f"{spans:.0f}"
    if left == 0:
        print("    (the backlog ran out before ingest ended: give a larger --backlog)")
    return f"{spans:.0f} {done / elapsed:.0f}"


def one_round(url: str, args: argparse.Namespace, number: int) -> tuple[float, float, float]:
    cli("db", "upgrade", "--database-url", url)
    key = cli("keys", "create", "--owner", "bench", "--database-url", url).stdout.strip()
    backlog = build_requests(args.backlog, seed=number)
    server = start_server(url)
    try:
        drive("http", [server], key, backlog)
        deadline = time.monotonic() + 120
        while sql(url, "SELECT count(*) FROM pending_traces"):
            if time.monotonic() > deadline:
                raise SystemExit("the backlog's runs were not computed")
            time.sleep(0.1)
    finally:
        server.stop()
    runs = sql(url, "SELECT count(*) FROM runs")
    alone_bodies = build_requests(args.requests, seed=1000 + number)
    during_bodies = build_requests(args.requests, seed=2000 + number)
    order = [False, True] if number % 2 == 0 else [True, False]
    found: dict[bool, str] = {}
    for reclassify in order:
        bodies = during_bodies if reclassify else alone_bodies
        found[reclassify] = rate(url, key, bodies, reclassify)
    alone = float(found[False])
    during, per_s = (float(v) for v in found[True].split())
    print(
        f"  round {number + 1}: backlog {runs} runs; alone {alone:,.0f} spans/s, "
        f"reclassifying {during:,.0f} spans/s ({during / alone:.2f}x), "
        f"{per_s:,.0f} runs reclassified/s meanwhile",
        flush=True,
    )
    return alone, during, per_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backlog", type=int, default=150, help="requests of 512 spans stored")
    parser.add_argument("--requests", type=int, default=100, help="requests measured")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    print(
        f"{args.store}: backlog {args.backlog} x 512 spans, {args.requests} requests measured, "
        f"{args.rounds} rounds",
        flush=True,
    )
    with ExitStack() as stack:
        cluster = stack.enter_context(PostgresCluster()) if args.store == "postgresql" else None
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(dir="/dev/shm")))
        results = []
        for number in range(args.rounds):
            if cluster is not None:
                url = cluster.create_database()
            else:
                url = f"sqlite:///{folder / f'round{number}.db'}"
            results.append(one_round(url, args, number))
    alone = statistics.median(r[0] for r in results)
    during = statistics.median(r[1] for r in results)
    per_s = statistics.median(r[2] for r in results)
    print(
        f"median: alone {alone:,.0f} spans/s, while reclassifying {during:,.0f} spans/s: "
        f"{during / alone:.2f}x (at least 0.80 wanted); {per_s:,.0f} runs reclassified/s"
    )


if __name__ == "__main__":
    main()
