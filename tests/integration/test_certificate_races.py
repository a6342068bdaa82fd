"""Two collector processes on one database, asked for the same certificates at
the same instant, issue ONE certificate per subject and append to ONE chain
(CERTS.md section 3): on PostgreSQL through the certificates lock, on a
SQLite file through its write lock."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import httpx
import pytest

from bench.support.otlp import agent_run
from bench.support.servers import ServerProcess, cli, start_server

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog

RUNS = 12


def _url(server: ServerProcess) -> str:
    return f"http://127.0.0.1:{server.http_port}"


def _at_once(urls: list[str]) -> list[httpx.Response]:
    """GET every URL in its own thread, all released together."""
    barrier = threading.Barrier(len(urls))
    replies: list[httpx.Response | None] = [None] * len(urls)

    def fetch(index: int) -> None:
        with httpx.Client(timeout=60) as client:
            barrier.wait(30)
            replies[index] = client.get(urls[index])

    threads = [threading.Thread(target=fetch, args=(i,)) for i in range(len(urls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert all(reply is not None for reply in replies)
    return [reply for reply in replies if reply is not None]


def test_two_collectors_issue_one_certificate_per_subject_and_one_chain(
    database_url: str, tmp_path: Path
) -> None:
    key_file = str(tmp_path / "shared-signing.pem")
    extra = ("--signing-key", key_file, "--decode-workers", "0", "--assembly-delay", "0.05")
    first = start_server(database_url, *extra)
    second = start_server(database_url, *extra)  # the same key file, already created
    try:
        key = cli("keys", "create", "--owner", "o", "--database-url", database_url).stdout.strip()
        headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
        for i in range(RUNS):
            body = agent_run(f"t{i % 3}", service="raced").SerializeToString()
            reply = httpx.post(f"{_url(first)}/v1/traces", content=body, headers=headers)
            assert reply.status_code == 200
        api = f"{_url(first)}/api/v1"
        deadline = time.monotonic() + 30
        while True:
            runs = httpx.get(f"{api}/runs", params={"page_size": 100}).json()["items"]
            if len(runs) == RUNS and all(r["status"] == "completed" for r in runs):
                break
            assert time.monotonic() < deadline, "the runs did not complete"
            time.sleep(0.2)
        agent = runs[0]["agent_id"]
        issued: dict[str, set[str]] = {}
        for path in [f"/runs/{r['id']}/certificate" for r in runs] + [
            f"/agents/{agent}/certificate"
        ]:
            replies = _at_once([f"{_url(s)}/api/v1{path}" for s in (first, second)])
            assert [r.status_code for r in replies] == [200, 200], [r.text for r in replies]
            issued[path] = {hashlib.sha256(r.content).hexdigest() for r in replies}
        assert all(len(envelopes) == 1 for envelopes in issued.values())  # the same answer
        log = httpx.get(f"{api}/certificates/log", params={"limit": 1000}).json()
        subjects = [entry["subject"] for entry in log["items"]]
        assert len(subjects) == len(set(subjects)) == RUNS + 1  # one certificate each
        chain = "0" * 64
        for n, entry in enumerate(log["items"], start=1):
            chain = hashlib.sha256(
                bytes.fromhex(chain) + bytes.fromhex(entry["statement_digest"])
            ).hexdigest()
            assert (entry["n"], entry["chain"]) == (n, chain)
    finally:
        first.stop()
        second.stop()
