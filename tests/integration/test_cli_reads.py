"""`demo`, `agents`, `score`, `runs` against a real server process and its database."""

from __future__ import annotations

import time
from pathlib import Path

from bench.support.otlp import agent_run
from bench.support.postgres import PostgresCluster
from bench.support.servers import OtlpClient, cli, start_server
from tests.schemas import sqlite_copy_at_head


def test_demo_populates_a_leaderboard_read_directly_and_over_http(database_url: str) -> None:
    url = database_url
    server = start_server(url)
    try:
        env = {"BADGE_DATABASE_URL": url, "BADGE_HTTP_PORT": str(server.http_port)}
        demo = cli("demo", "--rounds", "2", env=env)
        # support-bot runs ten tasks in two versions: 40 runs, the others 8 each
        assert "sent 56 runs of 3 agents" in demo.stdout
        deadline = time.monotonic() + 30
        while True:
            board = cli("agents", "--database-url", url).stdout
            if (board.count("    8  "), board.count("   40  ")) == (2, 1):
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
    cli("db", "upgrade", "--database-url", url)
    opened = f"database: {tmp_path / 'quiet.db'}\n"  # which one, on stderr
    created = cli("keys", "create", "--owner", "me", "--database-url", url)
    assert created.stdout.startswith("bdg_") and created.stdout.count("\n") == 1
    assert created.stderr == (
        f"{opened}Key for owner 'me' (role agent). It is shown once; store it now.\n"
    )
    board = cli("agents", "--database-url", url)
    assert board.stderr == opened and board.stdout.startswith("  #  agent")
    for loud in (
        cli("agents", "--verbose", "--database-url", url),
        cli("--verbose", "keys", "list", "--database-url", url),
        cli("agents", "--database-url", url, env={"BADGE_LOG_LEVEL": "INFO"}),
    ):
        assert "INFO collector.storage.migrate: schema at revision" in loud.stderr


def test_grade_posts_to_a_server_with_a_grader_key_and_score_shows_the_verified_state(
    tmp_path: Path,
) -> None:
    url = sqlite_copy_at_head(tmp_path / "graded.db")  # keys create makes no database
    agent_key = cli("keys", "create", "--owner", "me", "--database-url", url).stdout.strip()
    grader = cli(
        "keys", "create", "--owner", "me", "--role", "grader", "--database-url", url
    ).stdout.strip()
    server = start_server(Path(tmp_path / "graded.db"))
    try:
        message = agent_run("t1", service="cli-graded", success=True)
        trace_id = message.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
        client = OtlpClient(server, agent_key)
        client.export(message.SerializeToString(), "http")
        client.close()
        server_url = f"http://127.0.0.1:{server.http_port}"
        wait_until = time.monotonic() + 30
        while "self_reported" not in (
            before := cli("score", "cli-graded", "--url", server_url, check=False).stdout
        ):
            assert time.monotonic() < wait_until, before
            time.sleep(0.1)
        assert "verified state: self_reported (0 of 1 completed runs graded)" in before
        graded = cli(
            "grade", "cli-graded", trace_id, "--fail", "--score", "0.5", "--expected", "42",
            "--output", "41", "--url", server_url, "--key", grader,
        )  # fmt: skip
        assert graded.stdout.startswith(f"graded cli-graded run {trace_id}: fail (runs: ")
        after = cli("score", "cli-graded", "--database-url", url).stdout
        assert "verified state: verified (1 of 1 completed runs graded)" in after
        assert "successful 0" in after
        early = cli(
            "grade", "cli-graded", "not-yet-sent", "--success", "--url", server_url,
            env={"BADGE_KEY": grader},
        )  # fmt: skip
        assert "none stored yet" in early.stdout
        refused = cli(
            "grade", "cli-graded", trace_id, "--success", "--url", server_url,
            "--key", agent_key, check=False,
        )  # fmt: skip
        assert refused.returncode == 1 and "403" in refused.stderr
        keyless = cli(
            "grade", "cli-graded", trace_id, "--success", "--url", server_url, check=False,
            env={"BADGE_KEY": ""},
        )  # fmt: skip
        assert keyless.returncode == 2 and "grader key" in keyless.stderr
        neither = cli("grade", "cli-graded", trace_id, "--key", grader, check=False)
        assert neither.returncode == 2 and "--success" in neither.stderr
    finally:
        server.stop()


def test_no_command_but_serve_and_db_upgrade_creates_a_database(tmp_path: Path) -> None:
    """`keys create` in the wrong folder made a new empty database there and
    printed a key the server never accepted; now it names the path and exits 2."""
    path = tmp_path / "elsewhere" / "badge-collector.db"
    path.parent.mkdir()
    for command in (
        ["keys", "create", "--owner", "me"],
        ["keys", "list"],
        ["keys", "revoke", "bdg_x"],
        ["agents"],
        ["score", "a"],
        ["runs", "a"],
        ["compare", "a"],
        ["diagnose", "a"],
        ["demo"],
    ):
        refused = cli(*command, check=False, env={"BADGE_DATABASE_URL": f"sqlite:///{path}"})
        assert refused.returncode == 2, (command, refused.stderr)
        assert refused.stdout == ""
        assert f"error: no database at {path}: `badge-collector serve` or" in refused.stderr
        assert not path.exists()
    relative = cli("keys", "list", check=False, env={"BADGE_DATABASE_URL": "sqlite:///./x.db"})
    assert f"no database at {Path.cwd() / 'x.db'}" in relative.stderr  # the absolute path
    cli("db", "upgrade", "--database-url", f"sqlite:///{path}")
    assert path.exists()
    listed = cli("keys", "list", "--database-url", f"sqlite:///{path}")
    assert listed.stderr == f"database: {path}\n"


def test_a_postgresql_database_that_cannot_be_opened_is_named_without_its_password() -> None:
    url = "postgresql+psycopg://badge:s3cret@127.0.0.1:9/nowhere"  # port 9: nothing listens
    refused = cli("agents", "--database-url", url, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "cannot open the database postgresql+psycopg://badge:***@127.0.0.1:9/nowhere" in (
        refused.stderr
    )
    assert "s3cret" not in refused.stderr and "Traceback" not in refused.stderr


def test_a_postgresql_database_that_does_not_exist_is_refused(postgres: PostgresCluster) -> None:
    url = postgres.url("no_such_database")
    refused = cli("keys", "create", "--owner", "me", "--database-url", url, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"cannot open the database {url}" in refused.stderr
    assert 'database "no_such_database" does not exist' in refused.stderr


def test_the_read_commands_say_what_their_figures_are(tmp_path: Path) -> None:
    """`score` names infrastructure failures for what they are beside the
    unsuccessful runs, and says why pass^5 is 0 after 3 runs a task; `diagnose`
    prints "failed", not "value False"; `runs` shows whole task ids."""
    long_task = "refund-request-outside-the-window"  # 33 characters: cut at 16 before
    server = start_server(tmp_path / "wording.db")
    try:
        url = f"sqlite:///{tmp_path / 'wording.db'}"
        key = cli("keys", "create", "--owner", "me", "--database-url", url).stdout.strip()
        client = OtlpClient(server, key)
        for i in range(3):
            run = agent_run(long_task, service="worded", success=i == 0, latency_ns=900_000_000)
            client.export(run.SerializeToString(), "http")
        client.close()
        server_url = f"http://127.0.0.1:{server.http_port}"
        deadline = time.monotonic() + 30
        while "runs 3:" not in (score := cli("score", "worded", "--url", server_url).stdout):
            assert time.monotonic() < deadline, score
            time.sleep(0.1)
        assert (
            "runs 3: completed 3 (successful 1, unsuccessful 2), infrastructure failures 0, "
            "timeout 0, running 0"
        ) in score
        assert (
            "pass^5 0.000  (k = 5 needs 5 runs a task: 1 of 1 tasks have fewer, count 0)" in score
        )
        diagnosis = cli("diagnose", "worded", "--url", server_url).stdout
        assert "value False" not in diagnosis and "value 900" not in diagnosis
        assert f"task {long_task}  version -  failed" in diagnosis
        assert f"task {long_task}  version -  900 ms" in diagnosis
        # the curl lines need the agent owner's key, not any key (the first start's is local's)
        assert "(a trace needs a key of owner 'me': set KEY to one before the commands below)" in (
            diagnosis
        )
        runs = cli("runs", "worded", "--url", server_url).stdout.splitlines()
        assert len(runs) == 4 and all(f" {long_task} " in line for line in runs[1:])
    finally:
        server.stop()
