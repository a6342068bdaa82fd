"""Reads do not starve ingest: exports and health under a flood of page reads.

    python bench/read_flood.py [--agents 1000] [--runs-each 100] [--readers 200]
                               [--seconds 60] [--rate 10] [--spans 64] [--unbounded]
                               [--flags "--max-concurrent-reads 8 ..."]

Stores `--agents` agents of `--runs-each` runs (bench/reads.py's fill) in a
fresh SQLite database, starts a real collector at its defaults, waits for
the sweeper's board, and picks the heaviest dashboard page by timing each
candidate. Then two phases of `--seconds` each: quiet, and flooded by
`--readers` keyless readers asking for that page in a loop, as fast as they
are answered and never backing off (a 503 is asked again at once). In both,
another owner exports `--spans`-span requests at `--rate` a second (one
sender, paced, as an agent's exporter; a slow answer delays the next) and a
monitor asks `/healthz` every 100 ms. Prints, per phase, the exports done a
second and their answer times, the health answer times, and the reads
answered and refused a second; then ingest's share of its quiet rate.

`--unbounded` runs the same on a second server whose read bound cannot be
reached (`--max-concurrent-reads 100000`): what the flood did before the
read gate, measured in the same sitting (issue 39: 9.9 -> 5.1 exports a
second, p99 23 ms -> 2.9 s, /healthz 4.25 s). `--flags` are given to the
first server (other read bounds than the defaults, to size them).
"""

from __future__ import annotations

import argparse
import http.client
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.overload import percentiles  # noqa: E402
from bench.payloads import build_requests  # noqa: E402
from bench.reads import fill  # noqa: E402
from bench.support.servers import OtlpClient, ServerProcess, cli, start_server  # noqa: E402
from collector.storage.engine import open_database  # noqa: E402

HEALTH_EVERY_S = 0.1
UNBOUNDED = ("--max-concurrent-reads", "100000", "--max-waiting-reads", "0")


@dataclass
class Phase:
    exports: list[float] = field(default_factory=list)  # answer times of acknowledged ones
    export_failures: Counter[str] = field(default_factory=Counter)
    health: list[float] = field(default_factory=list)
    reads: Counter[int] = field(default_factory=Counter)
    seconds: float = 0.0


def wait_for_board(url: str) -> None:
    db = open_database(url)
    try:
        while True:  # the sweeper builds the board, some agents a sweep
            with db.reader.connect() as conn:
                if not conn.execute(text("SELECT count(*) FROM board_stale")).scalar_one():
                    return
            time.sleep(0.5)
    finally:
        db.dispose()


def heaviest_page(root: str, agent: str) -> str:
    """The candidate page with the slowest median of five (keyless)."""
    candidates = [
        "/",
        "/?all=true",
        "/?all=true&correctness=0&latency=5&cost=1&tool_efficiency=0&robustness=0",
        f"/agents/{agent}",
        f"/agents/{agent}/runs",
        "/api/v1/agents?page_size=500",
    ]
    timed: dict[str, float] = {}
    with httpx.Client(base_url=root, timeout=120) as client:
        for path in candidates:
            times = []
            for _ in range(5):
                started = time.perf_counter()
                client.get(path).raise_for_status()
                times.append(time.perf_counter() - started)
            timed[path] = sorted(times)[2]
            print(f"  {path[:60]:<60} median {timed[path] * 1000:7.1f} ms", flush=True)
    return max(timed, key=lambda path: timed[path])


def phase(
    server: ServerProcess,
    key: str,
    bodies: list[bytes],
    seconds: float,
    rate: float,
    page: str | None,
    readers: int,
) -> Phase:
    """Exports, health checks and (with `page`) the flood, for `seconds`."""
    result = Phase()
    stop = threading.Event()
    lock = threading.Lock()

    def export() -> None:
        client = OtlpClient(server, key, timeout=120)
        due = time.monotonic()
        n = 0
        while not stop.is_set():
            began = time.monotonic()
            try:
                client.export(bodies[n % len(bodies)], "http")
                result.exports.append(time.monotonic() - began)
            except Exception as exc:  # counted, not fatal: the figures say it
                result.export_failures[type(exc).__name__] += 1
            n += 1
            due += 1 / rate
            stop.wait(max(0.0, due - time.monotonic()))
        client.close()

    def monitor() -> None:
        with httpx.Client(timeout=120) as client:
            while not stop.is_set():
                began = time.monotonic()
                client.get(f"http://127.0.0.1:{server.http_port}/healthz").raise_for_status()
                result.health.append(time.monotonic() - began)
                stop.wait(max(0.0, HEALTH_EVERY_S - (time.monotonic() - began)))

    def read() -> None:
        assert page is not None
        conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=120)
        while not stop.is_set():
            try:
                conn.request("GET", page)
                reply = conn.getresponse()
                reply.read()
                status = reply.status
            except (OSError, http.client.HTTPException):
                conn.close()
                status = 0
            with lock:
                result.reads[status] += 1
        conn.close()

    threads = [threading.Thread(target=export), threading.Thread(target=monitor)]
    if page is not None:
        threads += [threading.Thread(target=read) for _ in range(readers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    result.seconds = time.monotonic() - started
    return result


def report(label: str, measured: Phase, quiet: Phase | None = None) -> None:
    rate = len(measured.exports) / measured.seconds
    share = f" = {rate / (len(quiet.exports) / quiet.seconds):.0%} of quiet" if quiet else ""
    failures = dict(measured.export_failures) or "none"
    print(f"{label}:")
    print(f"  exports {rate:.1f}/s{share}; failures {failures}")
    print(f"  export answer time: {percentiles(measured.exports)}")
    print(f"  /healthz answer time: {percentiles(measured.health)}")
    if measured.reads:
        per_s = {status: n / measured.seconds for status, n in sorted(measured.reads.items())}
        shown = ", ".join(f"{status}: {n:,.1f}" for status, n in per_s.items())
        print(f"  reads a second by status: {shown}")


def run(url: str, key: str, args: argparse.Namespace, agent: str, *flags: str) -> None:
    server = start_server(url, *flags)
    try:
        wait_for_board(url)
        root = f"http://127.0.0.1:{server.http_port}"
        print("heaviest page (keyless, 5 requests each):", flush=True)
        page = heaviest_page(root, agent)
        bodies = build_requests(50, spans_per_request=args.spans)
        quiet = phase(server, key, bodies, args.seconds, args.rate, None, 0)
        report("quiet", quiet)
        flooded = phase(server, key, bodies, args.seconds, args.rate, page, args.readers)
        report(f"{args.readers} keyless readers of {page}", flooded, quiet)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--runs-each", type=int, default=100)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=10.0, help="exports a second")
    parser.add_argument("--spans", type=int, default=64, help="spans per export")
    parser.add_argument("--unbounded", action="store_true", help="also without the read bound")
    parser.add_argument("--flags", default="", help="serve flags of the first server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'flood.db'}"
        started = time.perf_counter()
        agent = fill(url, args.runs_each, args.agents)
        print(
            f"{args.agents:,} agents x {args.runs_each:,} runs stored in "
            f"{time.perf_counter() - started:.0f} s; exports of {args.spans} spans at "
            f"{args.rate:g}/s by another owner; {args.seconds:g} s a phase",
            flush=True,
        )
        key = cli("keys", "create", "--owner", "exporter", "--database-url", url).stdout.strip()
        print(f"\n== read bound {args.flags or 'at its defaults'}")
        run(url, key, args, agent, *args.flags.split())
        if args.unbounded:
            print("\n== read bound out of reach (as before the read gate)")
            run(url, key, args, agent, *UNBOUNDED)


if __name__ == "__main__":
    main()
