"""Faults under load: the database stopped and started, decoder processes killed.

    python bench/faults.py outage [--down-s 20] [--senders 2] [--retry-for-s 40]
    python bench/faults.py kill [--kills 3] [--every-s 6] [--senders 2] [--spans 5]
                                [--store sqlite|postgresql]

A collector runs as a process of its own; exporters on both doors send
traces of `--spans` spans one request at a time and retry a 503 / UNAVAILABLE after the
wait it asks for, as an SDK does (bench/support/fault_load.py).

- outage: on a throwaway PostgreSQL cluster, stopped (`pg_ctl stop -m
  fast`) after 5 s of load for `--down-s`, then started again; the
  collector is not restarted.
- kill: SIGKILL one of the collector's decoder processes every
  `--every-s`, `--kills` times.

Prints every kind of answer with its count, what was acknowledged and
what the database holds of it (lost must be 0), when the collector was
ready and exporting again, and the log lines the fault caused (tracebacks
counted). Exits 1 if anything acknowledged was lost or any answer was a 500.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.fault_load import Load, Tally  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import ServerProcess, cli, decoder_pids, start_server  # noqa: E402

WARM_S = 5.0
AFTER_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fault", choices=["outage", "kill"])
    parser.add_argument("--down-s", type=float, default=20.0)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--every-s", type=float, default=6.0)
    parser.add_argument("--senders", type=int, default=2, help="per door")
    parser.add_argument("--spans", type=int, default=5, help="per request")
    parser.add_argument("--retry-for-s", type=float, default=40.0)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    if args.fault == "outage" or args.store == "postgresql":
        with PostgresCluster() as cluster:
            run(args, cluster.create_database(), cluster)
    else:
        with tempfile.TemporaryDirectory(prefix="badge-faults-") as folder:
            run(args, f"sqlite:///{Path(folder) / 'collector.db'}", None)


def run(args: argparse.Namespace, url: str, cluster: PostgresCluster | None) -> None:
    cli("db", "upgrade", "--database-url", url)
    key = cli("keys", "create", "--owner", "bench", "--database-url", url).stdout.strip()
    server = start_server(url)
    readiness = Readiness(server)
    load = Load(server, key, args.senders, args.retry_for_s, args.spans)
    load.start()
    time.sleep(WARM_S)
    logged_before = len(server.output)
    began = time.monotonic()
    if args.fault == "outage":
        assert cluster is not None
        cluster.pause()
        print(f"PostgreSQL stopped at {time.monotonic() - began:.1f} s")
        time.sleep(args.down_s)
        cluster.resume()
        back = time.monotonic()
        print(f"PostgreSQL started again after {back - began:.1f} s")
    else:
        for _ in range(args.kills):
            victims = decoder_pids(server.proc.pid)
            os.kill(victims[0], signal.SIGKILL)
            at = time.monotonic() - began
            print(f"killed decoder {victims[0]} (of {len(victims)}) at {at:.1f} s")
            readiness.watch(args.every_s)
        back = time.monotonic()
    ready_after = readiness.until_ready(back)
    time.sleep(AFTER_S)
    tally = load.stop()
    server.stop()  # drains: everything acknowledged is committed
    stored = stored_spans(url, tally.acked)
    logged = server.output[logged_before:]
    report(args, tally, load.spans, stored, logged, ready_after, readiness.unready_s)


class Readiness:
    """/readyz polled every 50 ms: how long it said not ready, and when it came back."""

    def __init__(self, server: ServerProcess) -> None:
        self._http = httpx.Client(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10)
        self.unready_s = 0.0

    def ready(self) -> bool:
        try:
            return self._http.get("/readyz").status_code == 200
        except httpx.HTTPError:
            return False

    def watch(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while (now := time.monotonic()) < until:
            if not self.ready():
                self.unready_s += min(0.05, until - now)
            time.sleep(0.05)

    def until_ready(self, since: float, limit_s: float = 120.0) -> float | None:
        while time.monotonic() - since < limit_s:
            if self.ready():
                return time.monotonic() - since
            time.sleep(0.05)
        return None


def stored_spans(url: str, traces: set[str]) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT trace_id, count(*) FROM spans GROUP BY trace_id")
            ).all()
    finally:
        engine.dispose()
    return sum(count for trace, count in rows if trace in traces)


def report(
    args: argparse.Namespace,
    tally: Tally,
    spans: int,
    stored: int,
    logged: list[str],
    ready_after: float | None,
    unready_s: float,
) -> None:
    acked = len(tally.acked) * spans
    lost = acked - stored
    print("answers (every attempt, retries included):")
    for answer, count in sorted(tally.answers.items(), key=lambda item: -item[1]):
        print(f"  {count:8,}  {answer}")
    print(f"acknowledged: {len(tally.acked):,} requests, {acked:,} spans")
    print(f"stored of those: {stored:,} spans; lost: {lost}")
    print(f"given up after {args.retry_for_s:g} s of retries (never acknowledged): {tally.gave_up}")
    shown = "never" if ready_after is None else f"{ready_after:.1f} s"
    print(f"/readyz 200 again after the fault ended: {shown}")
    if args.fault == "kill":
        print(f"/readyz not ready for about {unready_s:.1f} s in all")
    tracebacks = sum("Traceback" in line for line in logged)
    lines = [line.rstrip() for line in logged if line.strip()]
    print(f"log during and after the fault: {len(lines)} lines, {tracebacks} tracebacks")
    for line in lines[:12]:
        print("  " + re.sub(r"^\S+ \S+ ", "", line)[:160])  # without the date and time
    internal = sum(count for answer, count in tally.answers.items() if "500" in answer)
    internal += sum(count for answer, count in tally.answers.items() if "INTERNAL" in answer)
    raise SystemExit(1 if lost or internal else 0)


if __name__ == "__main__":
    main()
