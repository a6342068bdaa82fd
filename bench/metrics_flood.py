"""Keyless /metrics scrapers against a collector whose agents have the longest names.

    python bench/metrics_flood.py [--agents 1000] [--scrapers 10] [--seconds 20]
                                  [--refresh 5]

Issue 37 item 8: 1,000 agents named at the 16 KiB value limit made 115 MB per
scrape; 10 keyless scrapers took the server from 580 MB to 2.7 GB and
another owner's ingest from 10 to 0.6 exports/s. Starts a collector on a
fresh SQLite database (`--refresh` is its BADGE_METRICS_REFRESH_S; 0 renders
every scrape), gives one owner `--agents` agents whose service names are
16 KiB long, then measures another owner's exports (one small run per
request, back to back) for `--seconds` alone and for `--seconds` with
`--scrapers` threads scraping /metrics as fast as they are answered.

Prints the size of one scrape, the scrapes answered, the victim's exports/s
alone and under the scrapers, and the peak RSS of the server and its
decoders.
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.otlp import agent_run  # noqa: E402
from bench.support.servers import (  # noqa: E402
    MemorySampler,
    OtlpClient,
    cli,
    process_tree,
    rss_bytes,
    start_server,
)

NAME_BYTES = 16 * 1024


def key_for(url: str, owner: str) -> str:
    return cli("keys", "create", "--owner", owner, "--database-url", url).stdout.strip()


def victim_rate(client: OtlpClient, seconds: float) -> float:
    sent, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.export(agent_run(service="victim").SerializeToString(), "http")
        sent += 1
    return sent / seconds


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and its descendants so far."""
    total = 0.0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def scrape(port: int) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", "/metrics")
        return conn.getresponse().read()
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--scrapers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--refresh", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'flood.db'}"
        cli("db", "upgrade", "--database-url", url)
        named, victim = key_for(url, "named"), key_for(url, "victim")
        # The builders' runs are dated 2026-09: a window wide enough to keep them.
        window = ("--metrics-window-days", "3650")
        server = start_server(url, "--metrics-refresh", str(args.refresh), *window)
        try:
            sender = OtlpClient(server, named)
            for i in range(args.agents):
                name = f"{i:06d}".ljust(NAME_BYTES, "n")
                sender.export(agent_run(service=name).SerializeToString(), "http")
            sender.close()
            time.sleep(3)  # the board follows within about a second
            first = scrape(server.http_port)
            print(
                f"one scrape: {len(first) / 1e6:.2f} MB, {first.count(b'badge_agent_runs{')} agents"
            )
            client = OtlpClient(server, victim)
            pid = server.proc.pid
            server_cpu, bench_cpu = cpu_s(pid), own_cpu_s()
            alone = victim_rate(client, args.seconds)
            quiet = (cpu_s(pid) - server_cpu, own_cpu_s() - bench_cpu)
            server_cpu, bench_cpu = cpu_s(pid), own_cpu_s()
            before = rss_bytes(server.proc.pid)
            sampler = MemorySampler(server.proc.pid)
            sampler.start()
            stop, answered = threading.Event(), [0] * args.scrapers

            def scraper(index: int) -> None:
                while not stop.is_set():
                    scrape(server.http_port)
                    answered[index] += 1

            threads = [threading.Thread(target=scraper, args=(i,)) for i in range(args.scrapers)]
            for thread in threads:
                thread.start()
            flooded = victim_rate(client, args.seconds)
            stop.set()
            for thread in threads:
                thread.join()
            sampler.stop()
            busy = (cpu_s(pid) - server_cpu, own_cpu_s() - bench_cpu)
            client.close()
            print(f"scrapes answered: {sum(answered)} in {args.seconds:.0f} s")
            print(
                f"victim exports/s: {alone:.1f} alone, {flooded:.1f} under {args.scrapers} scrapers"
            )
            print(f"server RSS: {before / 2**20:.0f} MB before, peak {sampler.peak / 2**20:.0f} MB")
            print(
                f"CPU s (server, this script): alone {quiet[0]:.1f}, {quiet[1]:.1f}; "
                f"under scrapers {busy[0]:.1f}, {busy[1]:.1f}"
            )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
