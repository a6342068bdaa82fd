"""The signing key's file (CERTS.md section 1): created once beside a SQLite
database (mode 0600, said once), refused when unreadable or retired; and a
database outage answers the log, the keys and badges with 503 + Retry-After."""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.support.postgres import PostgresCluster
from bench.support.servers import cli, start_server
from collector.certificates.keyfile import KeyFile, read_key
from tests.integration.certificates import API, get, run_id_of, send_run
from tests.integration.harness import running_collector, wait_for
from tests.waiting import terminate_backends

CREATED = re.compile(r"Created the signing key (\S+) \(kid ([0-9a-f]{16}), mode 0600\)")


def test_serve_creates_the_key_beside_the_sqlite_file_once_with_mode_0600(
    tmp_path: Path,
) -> None:
    database = tmp_path / "collector.db"
    server = start_server(database)
    wait_for(lambda: any(CREATED.search(line) for line in server.output))
    server.stop()
    found = [m for line in server.output if (m := CREATED.search(line))]
    assert len(found) == 1
    path = tmp_path / "badge-signing-key.pem"
    assert Path(found[0][1]) == path and path.stat().st_mode & 0o777 == 0o600
    assert read_key(path).kid == found[0][2]
    again = start_server(database)
    again.stop()
    assert not any(CREATED.search(line) for line in again.output)  # said once: on creation
    assert read_key(path).kid == found[0][2]


def test_serve_refuses_a_key_file_that_is_not_an_ed25519_key(tmp_path: Path) -> None:
    bad = tmp_path / "key.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    done = cli(
        "serve",
        "--database-url",
        f"sqlite:///{tmp_path / 'c.db'}",
        "--signing-key",
        str(bad),
        "--http-port",
        "0",
        "--grpc-port",
        "0",
        check=False,
    )
    assert done.returncode == 2
    assert f"{bad} is not an Ed25519 signing key" in done.stderr


def _create(path: str, kids: Any, barrier: Any) -> None:
    barrier.wait(30)
    kids.put(KeyFile.open(Path(path)).current().kid)


def test_processes_creating_a_missing_key_file_at_once_make_one_key(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    barrier, kids = context.Barrier(4), context.Queue()
    path = str(tmp_path / "shared" / "key.pem")
    procs = [context.Process(target=_create, args=(path, kids, barrier)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    assert len({kids.get(timeout=5) for _ in procs}) == 1
    assert sorted(p.name for p in (tmp_path / "shared").iterdir()) == ["key.pem"]


def test_a_retired_key_brought_back_signs_nothing(tmp_path: Path) -> None:
    with running_collector(tmp_path, signing_key=str(tmp_path / "key.pem")) as c:
        old_kid = read_key(tmp_path / "key.pem").kid
        database = f"sqlite:///{c.db_path}"
        cli(
            "signing-key",
            "rotate",
            "--signing-key",
            str(tmp_path / "key.pem"),
            "--database-url",
            database,
        )
    kept = tmp_path / f"key.pem.{old_kid}.retired"
    with running_collector(tmp_path, signing_key=str(kept)) as c:
        assert c.service.signing_refused is not None and "retired" in c.service.signing_refused
        sent = send_run(c)
        c.settle()
        reply = get(c, f"{API}/runs/{run_id_of(c, sent)}/certificate")
        assert reply.status_code == 503 and f"kid {old_kid}" in reply.json()["detail"]


@pytest.mark.timing
def test_a_database_outage_answers_the_log_keys_and_badges_with_503(
    tmp_path: Path, postgres: PostgresCluster
) -> None:
    url = postgres.create_database()
    name = url.rsplit("/", 1)[1]
    with running_collector(tmp_path, database_url=url, signing_key=str(tmp_path / "k.pem")) as c:
        sent = send_run(c)
        c.settle()
        run_id = run_id_of(c, sent)
        agent_id = c.query("SELECT agent_id FROM runs")[0][0]
        admin = dict(host="127.0.0.1", port=postgres.port, user="postgres", dbname="postgres")
        with psycopg.connect(**admin, autocommit=True) as conn:  # type: ignore[arg-type]
            conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            # gone before the first request: pg_terminate_backend only signals them
            terminate_backends(url, "SELECT pid FROM pg_stat_activity WHERE datname = %s", name)
            try:
                # What reads only the certificate ports; the certificate
                # routes read the run store first, whose outages are
                # answered where that store is (api.ports.ReadStore).
                for path in (
                    f"{API}/certificates/log",
                    f"{API}/certificates/head",
                    "/.well-known/jwks.json",
                    f"/badge/{agent_id}.svg",
                    f"{API}/agents/{agent_id}/badge.json",
                ):
                    reply = get(c, path)
                    assert reply.status_code == 503, (path, reply.status_code, reply.text)
                    assert reply.headers["retry-after"] == "1"
            finally:
                conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        assert get(c, f"{API}/runs/{run_id}/certificate").status_code == 200
