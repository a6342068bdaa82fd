"""Every way a screening can go wrong: each error class is a recorded run, and what can be
known before dispatching (suite, collector, key) stops the command with exit 2 and
nothing sent."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.integration.harness import Collector
from tests.integration.screening import event, root_of, run_screen, runs_of, write_suite
from tests.screening_agent import agent_app, misbehaving_app, serving

REPO = Path(__file__).resolve().parents[2]
MODES = ["slow", "http_500", "not_json", "not_object", "no_output", "huge", "bad_counts", "ok"]
EXPECTED = {
    "slow": ("timeout", "timeout"),
    "http_500": ("http_error", "completed"),
    "not_json": ("bad_response_shape", "completed"),
    "not_object": ("bad_response_shape", "completed"),
    "no_output": ("bad_response_shape", "completed"),
    "huge": ("bad_response_shape", "completed"),
    "bad_counts": ("none", "completed"),
    "ok": ("none", "completed"),
}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_error_class_of_an_endpoint_is_a_recorded_run(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    tasks = [{"id": mode, "prompt": mode, "metadata": {"mode": mode}} for mode in MODES]
    suite = write_suite(tmp_path, tasks, rounds=1, timeout_s=1.5)
    with serving(misbehaving_app()) as url:
        done = run_screen(
            capsys, c, "rude-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key=grader
        )
    assert done.code == 0, done.err
    refused = write_suite(tmp_path, [{"id": "refused", "prompt": "p"}], name="refused", rounds=1)
    gone = run_screen(
        capsys,
        c,
        "rude-bot",
        "--suite",
        str(refused),
        "--endpoint",
        f"http://127.0.0.1:{closed_port()}/run",
        key=grader,
    )
    assert gone.code == 0, gone.err
    assert "connection_error" in gone.out
    runs = {r["task_id"]: r for r in runs_of(c, "rude-bot")}
    assert set(runs) == {*MODES, "refused"}
    seen = {task: (run["error_class"], run["status"]) for task, run in runs.items()}
    assert seen == {**EXPECTED, "refused": ("connection_error", "failed")}
    assert runs["slow"]["success"] is False and runs["ok"]["success"] is True
    assert runs["ok"]["cost_usd"] == pytest.approx(0.002)
    assert (runs["ok"]["input_tokens"], runs["ok"]["output_tokens"]) == (7, 3)
    assert (runs["bad_counts"]["input_tokens"], runs["bad_counts"]["cost_usd"]) == (None, None)
    assert 1400 <= runs["slow"]["latency_ms"] < 4500  # the timeout, not the 5 s answer
    huge = root_of(c, runs["huge"]["id"])
    body = event(huge, "badge.response")["body"]
    assert body.startswith('{"output": "xxx') and len(body.encode()) <= 16 * 1024
    error = root_of(c, runs["http_500"]["id"])["attributes"]
    assert error["error.type"] == "http_error" and error["http.response.status_code"] == 500
    failed = root_of(c, runs["refused"]["id"])
    assert "http.response.status_code" not in failed["attributes"]
    assert "Connect" in event(failed, "badge.response")["detail"]


def test_token_counts_at_the_end_of_their_range_are_recorded_exactly(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2^63-1 went through a float in the collector, became 2^63 and was dropped."""

    async def run(request: Request) -> Response:
        return JSONResponse({"output": "ok", "input_tokens": 2**63 - 1, "output_tokens": 1})

    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    suite = write_suite(tmp_path, [{"id": "big", "prompt": "p"}], rounds=1)
    with serving(Starlette(routes=[Route("/run", run, methods=["POST"])])) as url:
        done = run_screen(
            capsys, c, "count-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key=grader
        )
    assert done.code == 0, done.err
    [run_] = runs_of(c, "count-bot")
    assert (run_["input_tokens"], run_["output_tokens"]) == (2**63 - 1, 1)


def test_a_cost_at_the_end_of_its_range_is_the_runs_cost_at_the_ceiling(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCREEN.md section 3 reads any finite total_cost_usd >= 0; the collector
    dropped 1e308 and the run's cost read unknown. It reads the ceiling, $10^12."""

    async def run(request: Request) -> Response:
        return JSONResponse({"output": "ok", "total_cost_usd": 1e308})

    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    suite = write_suite(tmp_path, [{"id": "dear", "prompt": "p"}], rounds=1)
    with serving(Starlette(routes=[Route("/run", run, methods=["POST"])])) as url:
        done = run_screen(
            capsys, c, "cost-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key=grader
        )
    assert done.code == 0, done.err
    [run_] = runs_of(c, "cost-bot")
    assert (run_["cost_usd"], run_["cost_source"]) == (1e12, "reported")


def python_screen(c: Collector, key: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real command in a child process (its tracer provider becomes the global one)."""
    return subprocess.run(
        [sys.executable, "-m", "collector", "screen", *argv, "--url", c.http_url, "--key", key],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "BADGE_URL": "http://127.0.0.1:9"},
    )


@pytest.mark.parametrize("target", ["answer", "answer_async"])
def test_a_python_callable_is_screened_in_the_roots_context(
    collector: Collector, tmp_path: Path, target: str
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    tasks: list[dict[str, Any]] = [
        {
            "id": "tools",
            "prompt": "p",
            "expected_output": "ok",
            "metadata": {"answer": "ok", "tools": ["a", "b"]},
        },
        {"id": "raise", "prompt": "p", "metadata": {"mode": "raise"}},
        {"id": "slow", "prompt": "p", "timeout_s": 1, "metadata": {"mode": "slow"}},
    ]
    suite = write_suite(tmp_path, tasks, rounds=2)
    agent = f"py-{target}"
    done = python_screen(
        c,
        grader,
        agent,
        "--suite",
        str(suite),
        "--target",
        f"tests.screening_agent:{target}",
        "--settle",
        "0.2",
    )
    assert done.returncode == 0, done.stderr
    assert "round 2/2: 3 dispatched, 1 passed, 2 errors (exception 1, timeout 1)" in done.stderr
    runs = runs_of(c, agent)
    assert len(runs) == 6
    for run in runs:
        expected = {"tools": "none", "raise": "exception", "slow": "timeout"}[run["task_id"]]
        assert run["error_class"] == expected
    tools = [r for r in runs if r["task_id"] == "tools"]
    assert [r["steps"] for r in tools] == [2, 2] and all(r["success"] for r in tools)
    raised = root_of(c, next(r["id"] for r in runs if r["task_id"] == "raise"))
    exception = event(raised, "exception")
    assert exception["exception.type"] in ("KeyError", "ValueError")
    assert "raise" in exception["exception.stacktrace"]


def test_a_target_that_cannot_be_imported_is_a_usage_error(
    collector: Collector, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path, [{"id": "a", "prompt": "p"}])
    done = python_screen(
        collector, collector.key, "bot", "--suite", str(suite), "--target", "tests.nowhere:f"
    )
    assert done.returncode == 2 and "cannot import tests.nowhere" in done.stderr
    assert collector.span_count() == 0


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([{"id": "a", "prompt": "p"}, {"id": "a", "prompt": "q"}], "duplicate id"),
        ([{"id": "a", "prompt": "p", "grader": "exact"}], "grader"),
        ([{"id": "a", "prompt": "p", "colour": "red"}], "colour"),
    ],
)
def test_a_suite_error_exits_2_and_dispatches_nothing(
    collector: Collector,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tasks: list[dict[str, Any]],
    message: str,
) -> None:
    c = collector
    suite = write_suite(tmp_path, tasks)
    app, calls = agent_app(c.http_url, c.key, service="suite-bot")
    with serving(app) as url:
        done = run_screen(
            capsys, c, "suite-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key=c.key
        )
    assert done.code == 2 and message in done.err and str(suite) in done.err
    assert calls.tools == {} and c.span_count() == 0 and done.out == ""


def test_an_unreachable_collector_or_a_refused_key_exits_2_before_dispatching(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    suite = write_suite(tmp_path, [{"id": "a", "prompt": "p"}])
    app, calls = agent_app(c.http_url, c.key, service="pre-bot")
    with serving(app) as url:
        refused = run_screen(
            capsys, c, "pre-bot", "--suite", str(suite), "--endpoint", f"{url}/run", key="bdg_nope"
        )
        assert refused.code == 2 and "refused the key (401" in refused.err
        capsys.readouterr()
        from collector.cli import main

        code = main(
            ["screen", "pre-bot", "--suite", str(suite), "--endpoint", f"{url}/run"]
            + ["--url", f"http://127.0.0.1:{closed_port()}", "--key", c.key]
        )
        assert code == 2 and "unreachable" in capsys.readouterr().err
        usage = run_screen(
            capsys, c, "pre-bot", "--suite", str(suite), "--endpoint", "ftp://x", key=c.key
        )
        assert usage.code == 2 and "--endpoint" in usage.err
    assert calls.tools == {} and c.span_count() == 0


class OneAnswerPerConnection:
    """An HTTP agent on a raw socket that answers the first request of each connection
    with keep-alive headers, then closes it when the next request arrives, without an
    answer and without ever saying `Connection: close`: the race of an agent that
    closes after answering, made certain. With `answer=False` it closes a new
    connection without answering: that failure is the agent's."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.answered = 0
        self.connections = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/run"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            if _request(conn) and self.answer:
                body = b'{"output": "fine"}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
                self.answered += 1
                conn.recv(1)  # the next request's first byte: then close, answering nothing

    def close(self) -> None:
        self._server.close()


def _request(conn: socket.socket) -> bool:
    """Read one request (head and content-length body); False if the peer left."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += conn.recv(65536)
    return True


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_kept_alive_connection_the_agent_closed_is_retried_once_on_a_new_one(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    agent = OneAnswerPerConnection()
    suite = write_suite(tmp_path, [{"id": "t", "prompt": "p"}], rounds=4)
    try:
        done = run_screen(
            capsys,
            c,
            "closing-bot",
            "--suite",
            str(suite),
            "--endpoint",
            agent.url,
            "--concurrency",
            "1",
            key=grader,
        )
    finally:
        agent.close()
    assert done.code == 0, done.err
    runs = runs_of(c, "closing-bot")
    assert [r["error_class"] for r in runs] == ["none"] * 4
    assert agent.answered == 4 and agent.connections == 4  # one answer per connection


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_an_agent_that_closes_a_new_connection_without_answering_is_a_connection_error(
    collector: Collector, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    agent = OneAnswerPerConnection(answer=False)
    suite = write_suite(tmp_path, [{"id": "t", "prompt": "p"}], rounds=2)
    try:
        done = run_screen(
            capsys,
            c,
            "mute-bot",
            "--suite",
            str(suite),
            "--endpoint",
            agent.url,
            "--concurrency",
            "1",
            key=grader,
        )
    finally:
        agent.close()
    assert done.code == 0, done.err
    assert [r["error_class"] for r in runs_of(c, "mute-bot")] == ["connection_error"] * 2
    assert agent.connections == 2  # sent once each: a new connection is not retried


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_backtracking_regex_gives_up_instead_of_hanging_the_screener(
    collector: Collector, tmp_path: Path
) -> None:
    """`^(a+)+$` against 41 a's and a '!' took 79 s of CPU in Python's re; this answer
    is longer (hours). The search gives up, the grade fails, the screening goes on, and
    patterns only Python's re reads right still grade as SCREEN.md says."""
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    regex = [
        ("hang", r"^(a+)+$", "a" * 48 + "!"),
        ("unicode-word", r"^\w+$", "café"),  # \w is Unicode in Python's re
        ("lookahead", r"^(?=.*\d)(?!.*x)", "order 42"),
        ("backreference", r"(\b\w+\b) \1", "it was was late"),
    ]
    tasks = [
        {
            "id": name,
            "prompt": "p",
            "grader": "regex",
            "expected_output": pattern,
            "metadata": {"answer": answer},
        }
        for name, pattern, answer in regex
    ]
    suite = write_suite(tmp_path, tasks, rounds=1)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "collector",
            "screen",
            "regex-bot",
            "--suite",
            str(suite),
            "--target",
            "tests.screening_agent:answer",
            "--url",
            c.http_url,
            "--key",
            grader,
            "--settle",
            "0.2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "task 'hang' round 1: the regex search gave up" in done.stderr
    outcomes = {r["task_id"]: r["success"] for r in runs_of(c, "regex-bot")}
    assert outcomes == {
        "hang": False,
        "unicode-word": True,
        "lookahead": True,
        "backreference": True,
    }
