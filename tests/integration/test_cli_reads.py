"""`demo`, `agents`, `score`, `runs` against a real server process and its database."""

from __future__ import annotations

import time
from pathlib import Path

from tests.integration.processes import cli, start_server


def test_demo_populates_a_leaderboard_read_directly_and_over_http(database_url: str) -> None:
    url = database_url
    server = start_server(url)
    try:
        env = {"BADGE_DATABASE_URL": url, "BADGE_HTTP_PORT": str(server.http_port)}
        demo = cli("demo", "--rounds", "2", env=env)
        # support-bot runs in two versions: 16 runs, the others 8 each
        assert "sent 32 runs of 3 agents" in demo.stdout
        deadline = time.monotonic() + 10
        while True:
            board = cli("agents", "--database-url", url).stdout
            if (board.count("    8  "), board.count("   16  ")) == (2, 1):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for name in ("support-bot", "research-agent", "coder"):
            assert name in board
        over_http = cli("agents", "--url", f"http://127.0.0.1:{server.http_port}").stdout
        assert over_http == board
        score = cli("score", "coder", "--database-url", url).stdout
        assert "composite" in score and "tool_efficiency" in score and "pass^3" in score
        assert "█" in score
        runs = cli(
            "runs", "support-bot", "--limit", "3", "--url", f"http://127.0.0.1:{server.http_port}"
        ).stdout
        assert len(runs.strip().splitlines()) == 4  # header + 3 runs
        # the demo's second support-bot version is slower: compare flags it, diagnose finds it
        compared = cli(
            "compare", "support-bot", "--fail-on-regression", "--database-url", url, check=False
        )
        assert compared.returncode == 1, compared.stdout + compared.stderr
        assert "1.4.0" in compared.stdout and "1.5.0" in compared.stdout
        latency = next(line for line in compared.stdout.splitlines() if line.startswith("latency"))
        assert "regressed" in latency
        diagnosis = cli("diagnose", "support-bot", "--version", "1.5.0", "--database-url", url)
        assert "weakest axis: latency" in diagnosis.stdout
        missing = cli("score", "nobody", "--database-url", url, check=False)
        assert missing.returncode != 0 and "no agent named" in missing.stderr
    finally:
        server.stop()


def test_commands_print_only_their_answer_unless_asked_for_more(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'quiet.db'}"
    created = cli("keys", "create", "--owner", "me", "--database-url", url)
    assert created.stdout.startswith("bdg_") and created.stdout.count("\n") == 1
    assert created.stderr == "Key for owner 'me' (role agent). It is shown once; store it now.\n"
    board = cli("agents", "--database-url", url)
    assert board.stderr == "" and board.stdout.startswith("  #  agent")
    for loud in (
        cli("agents", "--verbose", "--database-url", url),
        cli("--verbose", "keys", "list", "--database-url", url),
        cli("agents", "--database-url", url, env={"BADGE_LOG_LEVEL": "INFO"}),
    ):
        assert "INFO alembic" in loud.stderr
