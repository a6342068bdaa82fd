"""Read latency with 100,000 runs stored for one agent.

    python bench/reads.py [--runs 100000] [--requests 30] [--store sqlite|postgresql]

Fills a fresh SQLite database's runs table directly (the read path does not
care how runs got there), starts a real collector on it, and prints the
median response time of /stats, /fitness, /reliability and /diagnostics,
of /stats and /fitness filtered to one version, and of /compare and
/versions over the two versions, over HTTP; then of every dashboard page
(server render, with its size: the target is a median under 100 ms and no
page over 300 KB with its assets); then of a /metrics scrape with
`--board-agents` (1,000) more agents that ran lately, each exported with its
gauges (target: a median under 50 ms with 1,000). Their board rows are
written directly once the pages are timed, as the sweeper would keep them
(collector.storage.board): a scrape reads those rows, never runs.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import start_server  # noqa: E402
from collector.assembly.identity import agent_id  # noqa: E402
from collector.storage.engine import open_database  # noqa: E402
from collector.storage.migrate import create_schema  # noqa: E402
from collector.storage.rows import RUN_COLUMNS  # noqa: E402
from collector.storage.tables import agent_board, agents, runs  # noqa: E402


def fill(url: str, count: int, agent_count: int = 1) -> str:
    """`count` runs for each of `agent_count` agents; returns the first agent's id."""
    db = open_database(url, synchronous="OFF")
    create_schema(db)
    names = ["big-agent"] + [f"agent-{a:05d}" for a in range(1, agent_count)]
    idents = [agent_id("bench", name) for name in names]
    for number, ident in enumerate(idents):
        _fill_agent(db, ident, names[number], count, number)
    with db.writer.begin() as conn:  # the kept sums, as the sweeper folds them
        while db.session(conn).fold_run_deltas():
            pass
    if db.dialect == "postgresql":  # what autovacuum has done by the time 1M runs are stored
        with db.writer.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    db.dispose()
    return idents[0]


def _fill_agent(db: Any, ident: str, name: str, count: int, number: int) -> None:
    rnd = random.Random(3 + number)
    rows = []
    for j in range(count):
        i = number * count + j
        status = rnd.choices(["completed", "failed", "timeout", "running"], [90, 4, 3, 3])[0]
        started = 1_790_000_000_000_000_000 + i * 1_000_000_000
        latency = rnd.uniform(100, 12_000)
        values = {
            "id": f"{i:08d}-0000-0000-0000-000000000000",
            "owner": "bench",
            "agent_id": ident,
            "trace_id": f"{i:032x}",
            "run_key": f"trace:{i:032x}",
            "root_span_id": None,
            "task_id": f"task-{rnd.randint(0, 40)}",
            "version": "1.0" if j < count // 2 else "2.0",  # two versions, half each
            "status": status,
            "success": rnd.random() < 0.7 if status != "running" else None,
            "success_source": "reported",
            "started_ns": started,
            "ended_ns": started + int(latency * 1e6),
            "latency_ms": latency,
            "steps": rnd.randint(0, 12),
            "tool_errors": 0,
            "llm_calls": rnd.randint(1, 8),
            "input_tokens": 1000,
            "output_tokens": 100,
            "cost_usd": rnd.uniform(0, 0.2),
            "cost_source": "estimated",
            "error_class": "none",
            "span_count": 9,
            "has_agent_span": True,
            "last_received_at": started / 1e9,
            "check_at": None,
            "terminal_at": started / 1e9 if status != "running" else None,
            "tool_calls": json.dumps([]),
            "updated_at": 0.0,
            "evaluation": None,
            "screening_id": None,  # not screened (migration 0016)
            "screening_round": None,
            "suite_name": None,
            "suite_digest": None,
            "grader_claim": False,
            "unrecognised_spans": 0,
            "conventions_digest": None,
            "steps_source": "spans",
        }
        rows.append(tuple(values[c] for c in RUN_COLUMNS))
    with db.writer.begin() as conn:
        db.session(conn).insert_ignore_rows(
            agents, ("id", "owner", "name", "first_seen_at"), [(ident, "bench", name, 0.0)]
        )
        for start in range(0, len(rows), 50_000):
            db.session(conn).insert_ignore_rows(runs, RUN_COLUMNS, rows[start : start + 50_000])


def fill_board(url: str, count: int) -> None:
    """`count` agents with board rows whose last run is within the last 20
    days (all inside /metrics' 30-day window), a few axes null as with young
    agents; not marked stale, so the sweeper leaves them as written."""
    db = open_database(url, synchronous="OFF")
    rnd = random.Random(5)
    now = time.time()
    agent_rows, board_rows = [], []
    for i in range(count):
        owner, name = f"team-{i % 25:02d}", f"agent-{i:05d}-support-bot"
        ident = agent_id(owner, name)
        agent_rows.append((ident, owner, name, 0.0))
        total = rnd.randint(10, 50_000)
        completed = int(total * 0.9)
        axes = [None if rnd.random() < 0.1 else round(rnd.uniform(0, 100), 2) for _ in range(5)]
        board_rows.append(
            (ident, owner, name, True, total, completed, int(completed * 0.7))
            + (rnd.randint(0, completed), now - rnd.uniform(0, 20 * 86400))
            + (round(rnd.uniform(20, 99), 2), 0.7, *axes, 100, json.dumps([70.0] * 12), now)
        )
    columns = tuple(c.name for c in agent_board.columns)
    with db.writer.begin() as conn:
        session = db.session(conn)
        session.insert_ignore_rows(agents, ("id", "owner", "name", "first_seen_at"), agent_rows)
        session.insert_ignore_rows(agent_board, columns, board_rows)
    db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument(
        "--board-agents", type=int, default=1000, help="agents on the board, all within 20 days"
    )
    parser.add_argument(
        "--many-agents",
        type=int,
        default=1000,
        help="then a second store of this many agents x --runs-each runs (0: skip)",
    )
    parser.add_argument("--runs-each", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = f"sqlite:///{Path(tmp) / 'reads.db'}"
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster()).create_database()
        started = time.perf_counter()
        ident = fill(url, args.runs)
        print(f"{args.store}: {args.runs:,} runs stored in {time.perf_counter() - started:.0f} s")
        server = start_server(url, "--insecure")
        try:
            root = f"http://127.0.0.1:{server.http_port}"
            base = f"{root}/api/v1/agents/{ident}"
            with httpx.Client(timeout=60) as client:
                print(
                    f"{args.runs} runs stored for one agent, half of them version 1.0 and "
                    f"half 2.0; {args.requests} requests each"
                )
                timed(client, f"{root}/api/v1/agents", {}, "/agents (leaderboard)", args.requests)
                views = [(path, {}) for path in ("stats", "fitness", "reliability", "diagnostics")]
                views += [(path, {"version": "2.0"}) for path in ("stats", "fitness")]
                views += [("compare", {"base": "1.0", "head": "2.0"}), ("versions", {})]
                for path, params in views:
                    label = f"/{path}" + ("?" + urlencode(params) if params else "")
                    timed(client, f"{base}/{path}", params, label, args.requests)
                assets = sum(
                    len(client.get(f"{root}/assets/{name}").content)
                    for name in ("dashboard.css", "dashboard.js")
                )
                run = client.get(f"{root}/api/v1/runs", params={"agent_id": ident}).json()
                print(f"dashboard pages (assets {assets / 1024:.1f} KB, loaded once)")
                weights = {"correctness": 0, "latency": 5, "cost": 1, "tool_efficiency": 0}
                pages = [
                    ("/", {}),
                    ("/", {**weights, "robustness": 0}),
                    (f"/agents/{ident}", {}),
                    (f"/agents/{ident}", {"version": "2.0"}),
                    (f"/agents/{ident}/runs", {"outcome": "failure"}),
                    (f"/runs/{run['items'][0]['id']}", {}),
                    (f"/agents/{ident}/compare", {}),
                ]
                for path, params in pages:
                    short = path.replace(ident, "{id}").replace(run["items"][0]["id"], "{run}")
                    label = short + ("?" + urlencode(params) if params else "")
                    timed(client, root + path, params, label, args.requests)
                fill_board(url, args.board_agents)  # after the pages: their figures stay put
                shown = min(args.board_agents, 1000)  # BADGE_METRICS_MAX_AGENTS's default
                on_board = f"{args.board_agents:,} agents on the board"
                print(f"a Prometheus scrape: {on_board}, {shown:,} exported")
                timed(client, f"{root}/metrics", {}, "/metrics", args.requests)
        finally:
            server.stop()
    if args.many_agents:
        many_agents(args)


def many_agents(args: argparse.Namespace) -> None:
    """The board's pages where every agent has runs: a page costs the same
    queries whatever the number of agents (collector/storage/board.py)."""
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = f"sqlite:///{Path(tmp) / 'many.db'}"
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster()).create_database()
        started = time.perf_counter()
        ident = fill(url, args.runs_each, args.many_agents)
        total = args.many_agents * args.runs_each
        print(
            f"{args.store}: {args.many_agents:,} agents x {args.runs_each:,} runs "
            f"({total:,}) stored in {time.perf_counter() - started:.0f} s"
        )
        server = start_server(url, "--insecure")
        try:
            root = f"http://127.0.0.1:{server.http_port}"
            started = time.perf_counter()
            db = open_database(url)
            while True:  # the sweeper builds the board, 200 agents a sweep
                with db.reader.connect() as conn:
                    left = conn.execute(text("SELECT count(*) FROM board_stale")).scalar_one()
                if not left:
                    break
                time.sleep(0.5)
            db.dispose()
            print(f"  board built by the sweeper in {time.perf_counter() - started:.1f} s")
            weights = {"correctness": 0, "latency": 5, "cost": 1, "tool_efficiency": 0}
            with httpx.Client(timeout=60) as client:
                for label, url_path, params in (
                    ("/ (leaderboard page)", "/", {}),
                    ("/ re-ranked by weights", "/", {**weights, "robustness": 0}),
                    ("/api/v1/agents", "/api/v1/agents", {}),
                    ("/api/v1/agents?page_size=1", "/api/v1/agents", {"page_size": 1}),
                    ("/agents/{id} (overview page)", f"/agents/{ident}", {}),
                ):
                    timed(client, root + url_path, params, label, args.requests)
        finally:
            server.stop()


def timed(client: httpx.Client, url: str, params: dict[str, Any], label: str, count: int) -> None:
    """Median and p90 over `count` requests after one warm-up, and the size."""
    body = client.get(url, params=params)  # warm up
    body.raise_for_status()
    times = []
    for _ in range(count):
        started = time.perf_counter()
        client.get(url, params=params).raise_for_status()
        times.append(time.perf_counter() - started)
    print(
        f"  {label[:44]:<44} median {statistics.median(times) * 1000:6.1f} ms  "
        f"p90 {sorted(times)[int(len(times) * 0.9)] * 1000:6.1f} ms  "
        f"{len(body.content) / 1024:5.1f} KB"
    )


if __name__ == "__main__":
    main()
