"""The screener's own cost: CPU per dispatch beyond calling the endpoint, and suite load time.

    python bench/screening.py [--tasks 1000] [--rounds 3] [--concurrency 16] [--repeats 3]

A fast local agent (a bare ASGI app under uvicorn, in its own process)
answers every POST at once, and a real collector (its own process,
--insecure) receives the screener's root spans. In this process, two
things are timed in turn, `--repeats` times each: calling the agent
directly with httpx (same bodies, same concurrency, the answer parsed), and
screening it (`--tasks` x `--rounds` through the screener's loop: root
spans, headers, streaming read, grading, OTLP export of every root). CPU is
this process's (every thread: the exporter's included), divided by the
dispatches. The target is under 2 ms of the screener's own CPU per
dispatch, so the agent, not the screener, bounds a screening. Then the
load time of a 10,000-task suite in each file format. Medians are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.support.servers import start_server  # noqa: E402
from collector.screening.http_target import HttpTarget  # noqa: E402
from collector.screening.plan import Dispatch, Screening, round_dispatches  # noqa: E402
from collector.screening.progress import RoundLines  # noqa: E402
from collector.screening.recorder import Recorder  # noqa: E402
from collector.screening.screener import screen  # noqa: E402
from collector.screening.suite import Suite, load_suite  # noqa: E402

ANSWER = b'{"output": "refund issued", "input_tokens": 12, "output_tokens": 4}'


async def fast_agent(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The agent: reads the request, answers at once (run by uvicorn in a child process)."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": ANSWER})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_agent() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "bench.screening:fast_agent", "--port", str(port)]
        + ["--log-level", "warning", "--no-access-log", "--lifespan", "off"],
        cwd=ROOT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"http://127.0.0.1:{port}/run"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the bench agent did not start")


def write_suite(directory: Path, tasks: int, suffix: str) -> Path:
    items = [
        {"id": f"task-{i:05d}", "prompt": f"Refund order {i}", "expected_output": "refund issued"}
        | ({"metadata": {"order": i}} if i % 2 else {})
        for i in range(tasks)
    ]
    path = directory / f"suite{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(item) + "\n" for item in items))
    elif suffix == ".json":
        path.write_text(json.dumps({"tasks": items}))
    else:
        path.write_text(yaml.safe_dump({"tasks": items}, sort_keys=False))
    return path


def cpu_of(work: Callable[[], int]) -> tuple[float, float, int]:
    """(CPU seconds of this process, wall seconds, dispatches) of one call of `work`."""
    cpu, wall = time.process_time(), time.perf_counter()
    count = work()
    return time.process_time() - cpu, time.perf_counter() - wall, count


def direct(url: str, screening: Screening, concurrency: int) -> int:
    """The baseline: the same POSTs with httpx, no screener around them."""

    async def run() -> int:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(limits=limits) as client:
            count = 0
            for round_number in range(1, screening.rounds + 1):
                pending = round_dispatches(screening, round_number)

                async def worker(pending: Iterator[Dispatch] = pending) -> int:
                    done = 0
                    for dispatch in pending:
                        reply = await client.post(
                            url,
                            content=dispatch.body.encode(),
                            headers={"content-type": "application/json"},
                        )
                        reply.json()
                        done += 1
                    return done

                count += sum(await asyncio.gather(*(worker() for _ in range(concurrency))))
            return count

    return asyncio.run(run())


def screened(url: str, collector: str, screening: Screening, concurrency: int) -> int:
    """The screener's loop as `screen` runs it, every root exported to the collector."""
    recorder = Recorder(screening, collector, None)
    target = HttpTarget(url, {}, "badge-collector/bench", screening.screening_id, concurrency)

    async def run() -> int:
        try:
            lines = RoundLines(screening.rounds, io.StringIO())
            outcomes = await screen(
                screening, target, target.shown_url, recorder, concurrency, lines
            )
        finally:
            await target.close()
        return len(outcomes)

    count = asyncio.run(run())
    delivery = recorder.close()
    if delivery.lost or delivery.exported != count:
        raise SystemExit(f"roots lost: {delivery.lost}, exported {delivery.exported} of {count}")
    return count


def load_times(directory: Path, repeats: int) -> dict[str, float]:
    times: dict[str, float] = {}
    for suffix in (".json", ".jsonl", ".yaml"):
        path = write_suite(directory, 10_000, suffix)
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            suite: Suite = load_suite(path)
            runs.append(time.perf_counter() - started)
            assert len(suite.tasks) == 10_000
        times[suffix] = statistics.median(runs)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        suite = load_suite(write_suite(directory, args.tasks, ".json"))
        server = start_server(directory / "collector.db", "--insecure")
        agent, url = start_agent()
        collector = f"http://127.0.0.1:{server.http_port}"
        try:
            figures: dict[str, list[tuple[float, float, int]]] = {"direct": [], "screener": []}
            for repeat in range(args.repeats):
                screening = Screening(f"bench-{repeat}", "bench-agent", "1", suite, args.rounds)
                figures["direct"].append(
                    cpu_of(lambda s=screening: direct(url, s, args.concurrency))
                )
                figures["screener"].append(
                    cpu_of(lambda s=screening: screened(url, collector, s, args.concurrency))
                )
        finally:
            agent.terminate()
            agent.wait(10)
            server.stop()
        per: dict[str, float] = {}
        print(
            f"{args.tasks} tasks x {args.rounds} rounds, concurrency {args.concurrency}, "
            f"median of {args.repeats}"
        )
        for name, runs in figures.items():
            per[name] = statistics.median(cpu / count * 1000 for cpu, _, count in runs)
            wall = statistics.median(count / wall for _, wall, count in runs)
            print(f"  {name:<9} CPU {per[name]:.3f} ms per dispatch, {wall:,.0f} dispatches/s")
        print(
            f"  screener's own CPU per dispatch: {per['screener'] - per['direct']:.3f} ms "
            "(target < 2 ms)"
        )
        for suffix, seconds in load_times(directory, 5).items():
            print(
                f"  10,000-task suite {suffix:<6} loads in {seconds * 1000:.0f} ms (target < 1 s)"
            )


if __name__ == "__main__":
    main()
