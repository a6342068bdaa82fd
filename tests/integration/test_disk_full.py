"""A SQLite database on a disk that fills up, then has room again (issue 37
item 7, docs/reliability.md "Faults"): every write is refused as retryable
(503 + Retry-After / UNAVAILABLE, JSON problems on the API), /readyz says
not ready, reads go on, and once there is room again the collector takes
writes without a restart and has lost nothing it acknowledged.

The full disk is real: the collector runs as a process in a mount namespace
of its own (`unshare`, as root or as a user with user namespaces) on a 32 MiB
tmpfs, and the test fills that filesystem through /proc/PID/root with a
file, until writing fails with ENOSPC, and then deletes the file. SQLite's
own `max_page_count` would refuse pages while its log could still grow;
here every write that needs a block fails, as on a full disk. (SQLite
itself cannot open a file through /proc/PID/root: it resolves the link to
"/", outside the namespace. So the database is made with its keys before
the server starts and copied onto the tmpfs, and copied off to be read.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import httpx

from bench.support.otlp import simple_trace
from bench.support.servers import EXPORT, ServerProcess, cli, start_server
from tests.integration.harness import wait_for
from tests.integration.outages import GENEROUS_S

DOWN = "the database is unavailable; retry later"
# In the server's namespace: a tmpfs on the folder ($0), the database made
# beforehand ($1) copied onto it, then the server.
MOUNT = 'mount -t tmpfs -o size=32m tmpfs "$0" && cp "$1" "$0/" && shift && exec "$@"'
SPANS = len(simple_trace().resource_spans[0].scope_spans[0].spans)


@contextmanager
def on_small_disk(tmp_path: Path, made: Path) -> Iterator[tuple[ServerProcess, Path]]:
    """A collector whose database (a copy of `made`) is on a 32 MiB tmpfs;
    the tmpfs folder, as the test sees it."""
    folder = tmp_path / "small"  # a tmpfs inside the server's namespace only
    folder.mkdir()
    mount = ("sh", "-c", MOUNT, str(folder), str(made))
    wrapper = ("unshare", "--map-root-user", "--mount", *mount)
    server = start_server(folder / made.name, wrapper=wrapper)
    try:
        yield server, Path(f"/proc/{server.proc.pid}/root") / folder.relative_to("/")
    finally:
        server.stop()


def fill(folder: Path) -> Path:
    """A file that takes every free block left."""
    filler = folder / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 2**20)
                out.flush()
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC
    return filler


def new_key(database: Path, role: str) -> str:
    url = f"sqlite:///{database}"
    made = cli("keys", "create", "--owner", "local", "--role", role, "--database-url", url)
    return made.stdout.strip()


def grpc_export(server: ServerProcess, key: str) -> grpc.StatusCode:
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        try:
            channel.unary_unary(EXPORT)(
                simple_trace().SerializeToString(),
                metadata=[("authorization", f"Bearer {key}")],
                timeout=30,
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.UNAVAILABLE:
                assert error.details() == DOWN
            return error.code()
    return grpc.StatusCode.OK


def test_a_full_disk_refuses_every_write_as_retryable_and_a_freed_one_takes_them_again(
    tmp_path: Path,
) -> None:
    made = tmp_path / "collector.db"
    cli("db", "upgrade", "--database-url", f"sqlite:///{made}")
    key, grader = (new_key(made, role) for role in ("agent", "grader"))
    with on_small_disk(tmp_path, made) as (server, folder), httpx.Client(timeout=30) as http:
        url = f"http://127.0.0.1:{server.http_port}"
        owner = {"authorization": f"Bearer {key}"}
        traces = {"content-type": "application/x-protobuf", **owner}
        acknowledged = 0

        def export() -> httpx.Response:
            nonlocal acknowledged
            body = simple_trace().SerializeToString()
            reply = http.post(f"{url}/v1/traces", content=body, headers=traces)
            acknowledged += reply.status_code == 200
            return reply

        assert [export().status_code for _ in range(5)] == [200] * 5
        weights = {"json": {"weights": {"cost": 1}}}
        assert http.put(f"{url}/api/v1/me/radar-weights", headers=owner, **weights).is_success
        agent = wait_for(lambda: http.get(f"{url}/api/v1/agents").json()["items"], GENEROUS_S)
        agent_id = agent[0]["id"]
        filler = fill(folder)
        # Whatever room the database's own files still had: a few writes may fit in it.
        first = wait_for(lambda: (reply := export()).status_code != 200 and reply, GENEROUS_S)
        assert first.status_code == 503 and first.headers["retry-after"] == "2"
        writes = [
            ("PUT", "/api/v1/me/radar-weights", {"json": {"weights": {"latency": 1}}}),
            ("DELETE", f"/api/v1/agents/{agent_id}", {}),
            ("DELETE", "/api/v1/me/radar-weights", {}),  # saved above: a row to delete
        ]
        for method, path, options in writes:
            answer = http.request(method, url + path, headers=owner, **options)
            assert answer.status_code == 503, (path, answer.text)
            assert answer.headers["retry-after"] == "2"
            assert answer.json() == {"detail": DOWN}
        grade = {"agent": "agent-a", "run_key": "none", "success": True}
        answer = http.post(
            f"{url}/api/v1/grades", json=grade, headers={"authorization": f"Bearer {grader}"}
        )
        assert (answer.status_code, answer.json()["detail"]) == (503, DOWN)
        assert grpc_export(server, key) == grpc.StatusCode.UNAVAILABLE
        ready = http.get(f"{url}/readyz")
        assert (ready.status_code, ready.json()) == (503, {"status": "the database is unavailable"})
        assert http.get(f"{url}/api/v1/agents/{agent_id}").status_code == 200  # reads go on
        filler.unlink()
        wait_for(lambda: http.get(f"{url}/readyz").status_code == 200, GENEROUS_S)
        assert export().status_code == 200 and grpc_export(server, key) == grpc.StatusCode.OK
        acknowledged += 1
        saved = http.put(f"{url}/api/v1/me/radar-weights", headers=owner, **weights)
        assert saved.status_code == 200
        copied = tmp_path / "copied"  # before the tmpfs goes with the server
        copied.mkdir()
        for name in ("collector.db", "collector.db-wal"):
            (copied / name).write_bytes((folder / name).read_bytes())
    with sqlite3.connect(copied / "collector.db") as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (acknowledged * SPANS,)
    text = "".join(server.output)
    assert text.count("database unavailable") == 1, text
    assert text.count("database available again") == 1, text
    assert "Traceback" not in text, text
