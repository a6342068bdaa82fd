"""An agent's coverage (CONVENTIONS.md section 6): how long one answer takes.

    python bench/coverage.py [--runs 1000] [--older 1000] [--spans 50]
                             [--requests 30] [--store sqlite|postgresql]
                             [--unknown-every 5]

Fills a fresh database directly (coverage reads stored rows; how they got
there does not matter): one agent with `--older` + `--runs` runs, one trace
each, `--spans` spans a trace: the root, every `--unknown-every`th span from
a scope no convention knows (three span names) and the others recognised by
`genai` (tool, llm and spans it knows without a role). Then times the read
store's `coverage` (the statements alone; with `detail=False`, the totals)
and `GET /api/v1/agents/{id}/coverage` and `/diagnostics` through a real
server, and prints each median over `--requests` calls. Only the newest
`--runs` (at most 1,000) runs are read; the older ones are there so the
answer has to pick them out.

Figures (2 cores shared with other work, load 4-6; medians of 30 calls;
1,000 newest of 2,000 runs x 50 spans, 100,000 spans stored):
                 store   store, totals   GET /coverage   GET /diagnostics
    sqlite       86 ms   1.3 ms          76 ms           102 ms (warns)
    postgresql   63 ms   1.4 ms          67 ms           109 ms (warns)
with `--unknown-every 0` (nothing to warn about), GET /diagnostics takes
4.1 ms (SQLite) and 5.0 ms (PostgreSQL): it reads the runs' totals only.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import start_server  # noqa: E402
from collector.assembly.identity import agent_id  # noqa: E402
from collector.assembly.runs import Timers  # noqa: E402
from collector.storage.engine import open_database  # noqa: E402
from collector.storage.migrate import create_schema  # noqa: E402
from collector.storage.reads import SqlReadStore  # noqa: E402
from collector.storage.rows import RUN_COLUMNS, SPAN_COLUMNS  # noqa: E402
from collector.storage.tables import agents, runs, spans, traces  # noqa: E402

OWNER, NAME = "bench", "covered-agent"
UNKNOWN_NAMES = ("Tool: search", "Generation", "Step")
KNOWN_RULES = (("tool", "genai:tool[0]"), ("llm", "genai:llm[0]"), ("other", "genai:applies_to"))


def fill(url: str, count: int, span_count: int, analyse: bool = True, every: int = 5) -> str:
    """`count` runs of one agent, each a trace of `span_count` spans; its id.
    `analyse=False` leaves PostgreSQL without statistics, as a new store is;
    every `every`th span is unrecognised (0: none)."""
    db = open_database(url, synchronous="OFF")
    create_schema(db)
    ident = agent_id(OWNER, NAME)
    trace_rows, span_rows, run_rows = [], [], []
    now_ns = time.time_ns() - 60 * 1_000_000_000
    for i in range(count):
        trace_id, root = f"{i:032x}", f"{i:08x}00000000"
        trace_rows.append((i + 1, OWNER, trace_id, 0.0, True))
        # Within the last hour: retention would remove older spans while the
        # server runs (and the answers would grow faster as it did).
        started = now_ns - (count - i) * 1_000_000
        for s in range(span_count):
            span_id = f"{i:08x}{s:08x}"
            if s == 0:
                scope, role, rule, name, parent = "harness", "other", "unrecognised", "run", ""
            elif every and s % every == 0:
                scope, role, rule = "acme.tracer", "other", "unrecognised"
                name, parent = UNKNOWN_NAMES[s % 3], root
            else:
                role, rule = KNOWN_RULES[s % 3]
                scope, name, parent = "opentelemetry.instrumentation.openai", f"{role} {s}", root
            values = {
                "owner": OWNER,
                "trace_id": trace_id,
                "span_id": span_id,
                "parent_span_id": parent,
                "agent_id": ident,
                "name": name,
                "kind": 1,
                "start_ns": started + s,
                "end_ns": started + s + 1000,
                "status_code": 0,
                "status_message": "",
                "flags": 0,
                "scope_name": scope,
                "received_at": started / 1e9,
                "grader": False,
                "role": role,
                "rule": rule,
                "facts": "{}",
                "encoded": b"",
                "resource_digest": b"",
                "key_id": None,
            }
            span_rows.append((i + 1, *(values[c] for c in SPAN_COLUMNS)))
        run_rows.append(_run(i, ident, trace_id, root, started, span_count, every))
    with db.writer.begin() as conn:
        session = db.session(conn)
        session.insert_ignore_rows(
            agents, ("id", "owner", "name", "first_seen_at"), [(ident, OWNER, NAME, 0.0)]
        )
        session.insert_ignore_rows(
            traces, ("id", "owner", "trace_id", "touched_at", "merged"), trace_rows
        )
        for start in range(0, len(span_rows), 20_000):
            session.insert_ignore_rows(
                spans, ("trace_ref", *SPAN_COLUMNS), span_rows[start : start + 20_000]
            )
        session.insert_ignore_rows(runs, (*RUN_COLUMNS, "trace_ref"), run_rows)
    if analyse and db.dialect == "postgresql":  # what autovacuum has done by then
        with db.writer.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    db.dispose()
    return ident


def _run(
    i: int, ident: str, trace_id: str, root: str, started: int, span_count: int, every: int
) -> tuple[Any, ...]:
    values: dict[str, Any] = {c: None for c in RUN_COLUMNS}
    values |= {
        "id": f"{i:08d}-0000-0000-0000-000000000000",
        "owner": OWNER,
        "agent_id": ident,
        "trace_id": trace_id,
        "run_key": f"trace:{trace_id}",
        "root_span_id": root,
        "status": "completed",
        "started_ns": started,
        "ended_ns": started + 1000,
        "tool_errors": 0,
        "llm_calls": 0,
        "error_class": "none",
        "span_count": span_count,
        "has_agent_span": False,
        "last_received_at": started / 1e9,
        "tool_calls": "[]",
        "updated_at": 0.0,
        "grader_claim": False,
        "unrecognised_spans": (span_count - 1) // every if every else 0,
    }
    return (*(values[c] for c in RUN_COLUMNS), i + 1)


def median_ms(call: Callable[[], Any], requests: int) -> float:
    call()  # warm: caches and plans
    took = []
    for _ in range(requests):
        started = time.perf_counter()
        call()
        took.append(time.perf_counter() - started)
    return 1000 * statistics.median(took)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--older", type=int, default=1000)
    parser.add_argument("--spans", type=int, default=50)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument(
        "--unknown-every", type=int, default=5, help="every Nth span unrecognised (0: none)"
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = f"sqlite:///{Path(tmp) / 'coverage.db'}"
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster()).create_database()
        total = args.runs + args.older
        started = time.perf_counter()
        # Filled in a process of its own: the rows it built and freed made
        # this one's later reads twice as slow (allocator state), which is
        # not what a server that ingested them sees.
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            ident = pool.apply(fill, (url, total, args.spans, True, args.unknown_every))
        print(
            f"{args.store}: {total:,} runs x {args.spans} spans stored in "
            f"{time.perf_counter() - started:.0f} s"
        )
        db = open_database(url)
        store = SqlReadStore(db, Timers(), time.time)
        answer = store.coverage(ident)
        print(
            f"  {answer.runs} runs read, {answer.spans:,} spans, "
            f"{answer.unrecognised:,} unrecognised"
        )
        for label, detail in (("store.coverage", True), ("store.coverage(detail=False)", False)):
            took = median_ms(lambda: store.coverage(ident, detail), args.requests)  # noqa: B023
            print(f"  {label:<30} {took:6.1f} ms")
        db.dispose()
        server = start_server(url, "--insecure")
        try:
            with httpx.Client(timeout=60) as client:
                path = f"http://127.0.0.1:{server.http_port}/api/v1/agents/{ident}/coverage"
                body = client.get(path).raise_for_status().json()
                print(f"  GET answers {body['runs_counted']} runs, {body['spans']:,} spans")
                diagnostics = path.removesuffix("coverage") + "diagnostics"
                for label, url in (
                    ("GET .../coverage", path),
                    ("GET .../diagnostics", diagnostics),
                ):
                    took = median_ms(lambda: client.get(url).raise_for_status(), args.requests)  # noqa: B023
                    print(f"  {label:<30} {took:6.1f} ms")
                again = client.get(path).raise_for_status().json()
                assert again["spans"] == body["spans"], "the server changed the rows meanwhile"
        finally:
            server.stop()


if __name__ == "__main__":
    main()
