"""A screening through faults (issue 37 item 5, docs/screening.md "Incomplete screenings"):
the screener killed with SIGKILL, the collector stopped and restarted on its port, the
database stopped and started. Real processes throughout: the screener is `python -m
collector screen`, the agent answers over HTTP, the collector of the restart is a
`serve` process, the database a PostgreSQL cluster of the test's own. Whatever is
lost shows: the screening says it is incomplete and the command exits 2, and
`--resume` dispatches what is missing, nothing else."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bench.support.postgres import PostgresCluster
from bench.support.servers import ServerProcess, cli, start_server
from tests.integration.harness import Collector, running_collector, wait_for
from tests.integration.screening import write_suite
from tests.screening_agent import serving

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog

REPO = Path(__file__).resolve().parents[2]
API = "/api/v1"
GENEROUS_S = 60.0  # what a step that takes a few seconds may take on a loaded machine


@dataclass
class Agent:
    """An uninstrumented agent that takes `delay_s` per answer and counts what it got."""

    delay_s: float
    asked: Counter[str]

    def app(self) -> Starlette:
        async def run(request: Request) -> Response:
            baggage = dict(part.split("=", 1) for part in request.headers["baggage"].split(","))
            self.asked[unquote(baggage["badge.run.id"])] += 1
            await asyncio.sleep(self.delay_s)
            return JSONResponse({"output": "ok", "input_tokens": 3})

        return Starlette(routes=[Route("/run", run, methods=["POST"])])


def tasks(count: int) -> list[dict[str, Any]]:
    return [{"id": f"t{i}", "prompt": f"task {i}", "expected_output": "ok"} for i in range(count)]


def screener(url: str, key: str, *argv: str) -> subprocess.Popen[str]:
    """`badge-collector screen` as a user runs it, in a process of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "collector", "screen", *argv, "--url", url, "--key", key],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("BADGE_")},
    )


def ended(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=240)
    return proc.returncode, out, err


def document(http: httpx.Client, url: str, agent: str, sid: str) -> dict[str, Any] | None:
    """The screening's document through the API, None while it is not there."""
    try:
        items = http.get(f"{url}{API}/agents", params={"all": "true"}).json()["items"]
    except (httpx.HTTPError, ValueError):
        return None
    for found in items:
        if found["name"] == agent:
            reply = http.get(f"{url}{API}/agents/{found['id']}/screenings/{sid}")
            if reply.status_code == 200:
                return dict(reply.json())
    return None


def stored(http: httpx.Client, url: str, agent: str, sid: str) -> int:
    found = document(http, url, agent, sid)
    return 0 if found is None else int(found["stored_runs"] or 0)


def test_a_screener_killed_midway_leaves_its_screening_marked_incomplete(
    collector: Collector, tmp_path: Path
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    agent = Agent(delay_s=0.15, asked=Counter())
    suite = write_suite(tmp_path, tasks(3), rounds=5)
    args = ("killed-bot", "--suite", str(suite), "--screening-id", "k9", "--settle", "0.5")
    with serving(agent.app()) as url:
        proc = screener(c.http_url, grader, *args, "--endpoint", f"{url}/run", "--concurrency", "1")
        wait_for(lambda: stored(c.http, c.http_url, "killed-bot", "k9") >= 4, GENEROUS_S)
        proc.send_signal(signal.SIGKILL)
        code, _, _ = ended(proc)
        assert code == -signal.SIGKILL
        c.settle()
        left = document(c.http, c.http_url, "killed-bot", "k9")
        assert left is not None and left["complete"] is False
        assert left["planned_runs"] == 15 and 4 <= left["stored_runs"] < 15
        page = c.http.get(f"{c.http_url}/agents/{agent_id(c)}/screenings/k9").text
        assert 'id="incomplete"' in page and f"{left['stored_runs']} of 15 planned" in page
        before = sum(agent.asked.values())
        code, out, err = ended(
            screener(c.http_url, grader, *args, "--endpoint", f"{url}/run", "--resume")
        )
    assert code == 0, err
    assert f"resumed: {15 - left['stored_runs']} of 15 to dispatch" in err
    assert sum(agent.asked.values()) - before == 15 - left["stored_runs"]
    assert "INCOMPLETE" not in out
    done = document(c.http, c.http_url, "killed-bot", "k9")
    assert done is not None and (done["complete"], done["stored_runs"]) == (True, 15)
    assert max(agent.asked.values()) <= 2  # only the dispatch in flight at the kill, twice


def agent_id(c: Collector) -> str:
    [(found,)] = c.query("SELECT id FROM agents WHERE name = 'killed-bot'")
    return str(found)


@contextmanager
def serve_process(tmp_path: Path) -> Iterator[tuple[ServerProcess, str, Path]]:
    db = tmp_path / "restart.db"
    server = start_server(db)
    try:
        key = cli(
            "keys",
            "create",
            "--owner",
            "me",
            "--role",
            "grader",
            "--database-url",
            f"sqlite:///{db}",
        ).stdout.strip()
        yield server, key, db
    finally:
        if server.proc.poll() is None:
            server.stop()


def restart_after(
    server: ServerProcess, db: Path, down_s: float, holder: list[ServerProcess]
) -> None:
    """Stop the collector, keep it down `down_s`, start it again on the same port."""
    port = server.http_port
    server.stop()
    time.sleep(down_s)
    holder.append(start_server(db, "--http-port", str(port)))


def test_a_collector_down_and_back_within_the_retry_window_loses_no_run(
    tmp_path: Path,
) -> None:
    agent = Agent(delay_s=0.25, asked=Counter())
    suite = write_suite(tmp_path, tasks(4), rounds=4)
    with serve_process(tmp_path) as (server, key, db), serving(agent.app()) as url:
        collector_url = f"http://127.0.0.1:{server.http_port}"
        http = httpx.Client(timeout=10)
        proc = screener(
            collector_url,
            key,
            "back-bot",
            "--suite",
            str(suite),
            "--endpoint",
            f"{url}/run",
            "--screening-id",
            "down-5s",
            "--concurrency",
            "1",
            "--settle",  # the retry window: 5 s down plus a restart, slow on a busy machine
            "20",
        )
        wait_for(lambda: stored(http, collector_url, "back-bot", "down-5s") >= 3, GENEROUS_S)
        again: list[ServerProcess] = []
        restart_after(server, db, 5.0, again)
        try:
            code, out, err = ended(proc)
            assert code == 0, err
            done = document(http, collector_url, "back-bot", "down-5s")
            assert done is not None and (done["complete"], done["stored_runs"]) == (True, 16)
            assert sum(agent.asked.values()) == 16  # nothing sent twice
            assert "did not reach the collector" not in err
        finally:
            http.close()
            for started in again:
                started.stop()


def test_a_collector_down_past_the_window_exits_2_and_resume_completes_it(
    tmp_path: Path,
) -> None:
    agent = Agent(delay_s=0.25, asked=Counter())
    suite = write_suite(tmp_path, tasks(4), rounds=4)
    with serve_process(tmp_path) as (server, key, db), serving(agent.app()) as url:
        collector_url = f"http://127.0.0.1:{server.http_port}"
        http = httpx.Client(timeout=10)
        args = ("lost-bot", "--suite", str(suite), "--endpoint", f"{url}/run")
        proc = screener(
            collector_url,
            key,
            *args,
            "--screening-id",
            "down-long",
            "--concurrency",
            "1",
            "--settle",
            "0.5",
        )
        wait_for(lambda: stored(http, collector_url, "lost-bot", "down-long") >= 3, GENEROUS_S)
        again: list[ServerProcess] = []
        restarter = threading.Thread(target=restart_after, args=(server, db, 14.0, again))
        restarter.start()
        try:
            code, out, err = ended(proc)
            restarter.join(GENEROUS_S)
            assert code == 2, err
            assert "did not reach the collector" in err and "--resume" in err
            left = document(http, collector_url, "lost-bot", "down-long")
            assert left is not None and left["complete"] is False and left["stored_runs"] < 16
            code, out, err = ended(
                screener(collector_url, key, *args, "--screening-id", "down-long", "--resume")
            )
            assert code == 0, err
            done = document(http, collector_url, "lost-bot", "down-long")
            assert done is not None and (done["complete"], done["stored_runs"]) == (True, 16)
            assert sum(agent.asked.values()) == 16 + (16 - left["stored_runs"])
        finally:
            http.close()
            restarter.join(GENEROUS_S)
            for started in again:
                started.stop()


class Stopped:
    """The test's own PostgreSQL cluster, stopped and started like a real outage."""

    def __init__(self, cluster: PostgresCluster) -> None:
        self.cluster = cluster

    def _pg_ctl(self, *argv: str) -> None:
        self.cluster._run(str(self.cluster.bin / "pg_ctl"), "-D", str(self.cluster.data), *argv)

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "-w", "stop")

    def start(self) -> None:
        options = f"-p {self.cluster.port} -c listen_addresses=127.0.0.1"
        options += f" -c unix_socket_directories={self.cluster.root}"
        log = str(self.cluster.root / "server.log")
        self._pg_ctl("-l", log, "-o", options, "-w", "start")


def test_a_database_outage_during_a_screening_leaves_nothing_silently_lost(
    tmp_path: Path,
) -> None:
    """PostgreSQL stopped for 8 s in the middle of a screening. Whatever the collector
    answers while it is down, a screening that lost runs says so and exits 2, and
    --resume completes it; one that lost none (the exports were retried) exits 0."""
    agent = Agent(delay_s=0.2, asked=Counter())
    suite = write_suite(tmp_path, tasks(4), rounds=5)
    with PostgresCluster() as cluster, serving(agent.app()) as url:
        database = cluster.create_database()
        with running_collector(tmp_path, database_url=database) as c:
            grader = c.service.keys.create("owner-a", "grader")
            args = ("pg-bot", "--suite", str(suite), "--endpoint", f"{url}/run")
            proc = screener(
                c.http_url,
                grader,
                *args,
                "--screening-id",
                "pg",
                "--concurrency",
                "1",
                "--settle",
                "12",
            )
            wait_for(lambda: stored(c.http, c.http_url, "pg-bot", "pg") >= 3, GENEROUS_S)
            outage = Stopped(cluster)
            outage.stop()
            time.sleep(8.0)
            outage.start()
            code, out, err = ended(proc)
            after = wait_for(lambda: document(c.http, c.http_url, "pg-bot", "pg"), GENEROUS_S)
            assert after["planned_runs"] == 20
            assert (code == 0) is (after["complete"] is True), err  # never a silent loss
            if code != 0:
                assert code == 2 and "incomplete" in err
                code, out, err = ended(
                    screener(c.http_url, grader, *args, "--screening-id", "pg", "--resume")
                )
                assert code == 0, err
            done = wait_for(lambda: document(c.http, c.http_url, "pg-bot", "pg"), GENEROUS_S)
            assert (done["complete"], done["stored_runs"]) == (True, 20)
