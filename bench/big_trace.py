"""One trace of a million spans: the server's memory and how far its run
lags behind (docs/sizing.md "One very large trace"; issue 29).

    python bench/big_trace.py [--spans 1000000] [--batch 10000]

Starts a real collector on a fresh SQLite file, sends one agent session's
spans in batches over OTLP/HTTP (tool and LLM calls under one agent span),
then its root, and prints after each tenth of the way the server's resident
memory, its peak so far and the CPU it has used; at the end, how long the
run took to show every span after the last batch was answered.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.otlp import EPOCH_NS, request, span  # noqa: E402
from bench.support.servers import start_server  # noqa: E402
from collector.storage.engine import open_database  # noqa: E402
from collector.storage.keys import KeyStore  # noqa: E402
from collector.storage.migrate import create_schema  # noqa: E402

TRACE = bytes.fromhex("5e55" * 8)
ROOT, AGENT = bytes.fromhex("00000000000000a1"), bytes.fromhex("00000000000000a2")


def span_id(i: int) -> bytes:
    return (i + 1_000).to_bytes(8, "big")


def batch(first: int, count: int) -> bytes:
    spans = []
    for i in range(first, first + count):
        start = EPOCH_NS + i * 1_000
        if i % 2:
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": f"t{i % 7}"}
        else:
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10}
        spans.append(
            span(
                TRACE,
                span_id(i),
                "step",
                parent=AGENT,
                start=start,
                end=start + 500,
                attributes=attrs,
            )
        )
    return request(spans, "big-session").SerializeToString()


def memory(pid: int) -> tuple[float, float]:
    """(resident MB now, peak MB) of a process."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def cpu_s(pid: int) -> float:
    parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.db"
        db = open_database(f"sqlite:///{path}")
        create_schema(db)
        key = KeyStore(db).create("bench")
        db.dispose()
        server = start_server(path)
        pid = server.proc.pid
        url = f"http://127.0.0.1:{server.http_port}/v1/traces"
        headers = {"authorization": f"Bearer {key}", "content-type": "application/x-protobuf"}
        try:
            with httpx.Client(timeout=120) as http:
                agent = span(
                    TRACE,
                    AGENT,
                    "invoke_agent big",
                    parent=ROOT,
                    start=EPOCH_NS,
                    end=EPOCH_NS + args.spans * 1_000,
                    attributes={"gen_ai.operation.name": "invoke_agent"},
                )
                http.post(
                    url,
                    content=request([agent], "big-session").SerializeToString(),
                    headers=headers,
                )
                began = time.perf_counter()
                step = max(1, args.spans // 10)
                for first in range(0, args.spans, args.batch):
                    reply = http.post(
                        url,
                        content=batch(first, min(args.batch, args.spans - first)),
                        headers=headers,
                    )
                    assert reply.status_code == 200, reply.text
                    if (first + args.batch) % step < args.batch:
                        now, peak = memory(pid)
                        sent, took = first + args.batch, time.perf_counter() - began
                        print(
                            f"{sent:>9} spans sent  {took:6.1f} s  rss {now:7.0f} MB  "
                            f"peak {peak:7.0f} MB  server cpu {cpu_s(pid):6.1f} s",
                            flush=True,
                        )
                root = span(
                    TRACE,
                    ROOT,
                    "badge.run",
                    start=EPOCH_NS,
                    end=EPOCH_NS + args.spans * 1_000 + 1,
                    attributes={"badge.task.id": "session"},
                )
                http.post(
                    url, content=request([root], "big-session").SerializeToString(), headers=headers
                )
            answered = time.perf_counter()
            want = args.spans + 2
            with sqlite3.connect(path) as conn:
                while True:
                    row = conn.execute("SELECT span_count, steps, llm_calls FROM runs").fetchone()
                    if row and row[0] == want:
                        break
                    time.sleep(0.5)
            now, peak = memory(pid)
            print(
                f"run complete {time.perf_counter() - answered:.1f} s after the last answer: "
                f"{row[0]} spans, {row[1]} steps, {row[2]} LLM calls"
            )
            print(
                f"server peak {peak:.0f} MB (now {now:.0f} MB), cpu {cpu_s(pid):.1f} s "
                f"over {time.perf_counter() - began:.1f} s"
            )
        finally:
            server.proc.terminate()
            server.wait()


if __name__ == "__main__":
    main()
