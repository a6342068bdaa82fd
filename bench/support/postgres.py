"""A throwaway PostgreSQL cluster for the suite and the benchmarks.

`initdb` into a fresh temp directory, `pg_ctl start` on a free loopback port
with its Unix socket in that directory, `pg_ctl stop` and delete at the end.
The server refuses to run as root, so as root the cluster belongs to the
`postgres` user. `make test` installs Debian's `postgresql`
first when it is missing (`scripts/ensure-postgres`).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def server_bin_dir() -> Path:
    """Where initdb/pg_ctl live: PATH first, then Debian's versioned dirs."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob(_BIN_GLOB), key=lambda p: int(Path(p).parent.name))
    for candidate in reversed(candidates):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found; run scripts/ensure-postgres "
        "(make test does) to install Debian's postgresql package"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _name(url: str) -> str:
    """The database a URL of `PostgresCluster.url` names."""
    return url.rsplit("/", 1)[1]


class PostgresCluster:
    """One server process; `create_database()` hands out empty databases."""

    def __init__(self, *, durable: bool = False) -> None:
        self.bin = server_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="badge-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._durable = durable
        self._names = itertools.count(1)
        self._as_postgres = os.geteuid() == 0

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self._as_postgres else []
        subprocess.run([*prefix, *argv], check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresCluster:
        self.root.chmod(0o755)
        self.data.mkdir()
        if self._as_postgres:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.data, "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-instructions",
        )
        for attempt in range(3):
            try:
                self._launch()
                break
            except subprocess.CalledProcessError:
                # The port was free when picked, then taken (xdist workers and other
                # suites pick theirs at the same moment): pick another, try again.
                if attempt == 2:
                    raise
                self.port = _free_port()
        return self

    def _launch(self) -> None:
        options = [
            f"-p {self.port}",
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self.root}",
            "-c max_connections=200",
        ]
        if not self._durable:  # the suite: crash safety of the OS is not under test
            options += ["-c fsync=off", "-c full_page_writes=off"]
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            " ".join(options),
            "-w",
            "start",
        )

    def pause(self) -> None:
        """Stop the server as an outage would (its clients' connections are
        ended, new ones refused), keeping its data for `resume`."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server again on the same port, with the same data."""
        self._launch()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, *, template: str | None = None) -> str:
        """A new database, empty or a copy of `template` (a URL from this
        cluster, with no one connected to it); returns its SQLAlchemy URL."""
        name = f"badge_{next(self._names)}"
        copied = f" TEMPLATE {_name(template)}" if template else ""
        self._admin(f"CREATE DATABASE {name}{copied}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {_name(url)} WITH (FORCE)")

    def _admin(self, sql: str) -> None:
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(sql)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
