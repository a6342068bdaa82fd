"""Mutation fuzzing of both OTLP doors of a running collector (`make fuzz`).

    python bench/fuzz.py [--inputs 1000000] [--doors http,grpc] [--workers 4]
                         [--seed 1] [--minutes 120] [--store sqlite|postgresql]

Starts one collector process with its default settings and an ingest key,
then sends `--inputs` mutated exports per door (bench/support/fuzz_inputs.py:
recorded framework payloads and hand-built requests, mutated as bytes, as
protobuf fields, as OTLP/JSON trees and as gzip) from `--workers` processes.
Every answer is judged (bench/support/fuzzing.py); prints the inputs
tried, answers by kind, failures (5xx or undocumented answers, hangs,
crashes), inputs per second and the peak RSS of the server and its decoder
processes, then checks the server still answers and the database is intact.
Failing inputs are written to tests/fixtures/fuzz/, which
tests/integration/test_fuzz.py replays on every CI run. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.fuzzing import Tally, Target, fuzz, keep  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import MemorySampler, cli, start_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inputs", type=int, default=1_000_000, help="per door")
    parser.add_argument("--doors", default="http,grpc")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=120.0, help="per door, at most")
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    failed = False
    with ExitStack() as stack:
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster(durable=True)).create_database()
        else:
            url = f"sqlite:///{stack.enter_context(tempfile.TemporaryDirectory())}/fuzz.db"
        cli("db", "upgrade", "--database-url", url)  # keys create makes no database
        key = cli("keys", "create", "--owner", "fuzz", "--database-url", url).stdout.strip()
        for door in args.doors.split(","):
            server = start_server(url)
            sampler = MemorySampler(server.proc.pid, every_s=0.05)
            sampler.start()
            target = Target(server.http_port, server.grpc_port, key)
            started = time.perf_counter()
            tally = fuzz(
                target,
                door,
                seed=args.seed,
                count=args.inputs,
                workers=args.workers,
                seconds=args.minutes * 60,
            )
            elapsed = time.perf_counter() - started
            crashed = server.proc.poll() is not None
            alive = not crashed and answers_health(server.http_port)
            sampler.stop()
            server.stop()
            failed |= report(door, tally, elapsed, crashed, alive, sampler.peak)
        failed |= not intact(url)
    raise SystemExit(1 if failed else 0)


def answers_health(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


def report(door: str, tally: Tally, elapsed: float, crashed: bool, alive: bool, peak: int) -> bool:
    hangs = tally.answers.get("hang", 0)
    print(
        f"OTLP/{door.upper()}: {tally.inputs:,} inputs ({tally.bytes_sent / 2**20:,.0f} MB) "
        f"in {elapsed:,.0f} s ({tally.inputs / elapsed:,.0f}/s); peak RSS, server + decoders: "
        f"{peak / 2**20:,.0f} MB"
    )
    print("  answers: " + ", ".join(f"{k} {n:,}" for k, n in sorted(tally.answers.items())))
    print(
        f"  failures: {tally.failed} (hangs {hangs}, crashes {int(crashed)}); "
        f"server answering afterwards: {'yes' if alive else 'NO'}"
    )
    for path in keep(tally.failures):
        print(f"  kept as a regression case: {path}")
    return bool(tally.failed) or crashed or not alive


def intact(url: str) -> bool:
    engine = create_engine(url)
    with engine.connect() as conn:
        if url.startswith("sqlite"):
            check = conn.execute(text("PRAGMA integrity_check")).scalar_one()
        else:
            check = "ok" if conn.execute(text("SELECT 1")).scalar_one() == 1 else "no"
        spans = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
    engine.dispose()
    print(f"database: integrity {check}, {spans:,} spans stored from inputs that were valid")
    return check == "ok"


if __name__ == "__main__":
    main()
