"""The collector as a real child process, as a user starts it."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
# What a failed HTTP export (no answer at all) raises from OtlpClient.export.
HTTP_TRANSPORT_ERRORS = (OSError, http.client.HTTPException)


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    grpc_port: int
    http_port: int
    output: list[str]
    reader: threading.Thread | None = None

    def wait(self, timeout: float = 60) -> int:
        """Wait for exit, then release the output pipe."""
        code = self.proc.wait(timeout)
        if self.reader is not None:
            self.reader.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code

    def stop(self) -> int:
        self.proc.terminate()
        return self.wait()

    def metric(self, name: str) -> float:
        """One unlabelled series of the server's /metrics (0 when absent)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=10)
        try:
            conn.request("GET", "/metrics")
            body = conn.getresponse().read().decode()
        finally:
            conn.close()
        found = re.search(rf"^{name} (\S+)$", body, re.M)
        return float(found.group(1)) if found else 0.0


def cli(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=check,
    )


def start_server(
    database: Path | str,
    *extra: str,
    env: dict[str, str] | None = None,
    nofile: int | None = None,
    wrapper: Sequence[str] = (),
) -> ServerProcess:
    """`serve` on port 0 with a SQLite file (a Path) or any database URL (a str);
    `nofile`: a descriptor limit (soft and hard) the server cannot raise;
    `wrapper`: a command that execs the server's (its pid stays the server's)."""
    if nofile is not None:
        wrapper = (*descriptor_limit(nofile), *wrapper)
    url = f"sqlite:///{database}" if isinstance(database, Path) else database
    proc = subprocess.Popen(
        [
            *wrapper,
            sys.executable,
            "-m",
            "collector",
            "serve",
            "--database-url",
            url,
            "--grpc-port",
            "0",
            "--http-port",
            "0",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    output: list[str] = []
    grpc_port = http_port = 0
    # A bound, not an expectation: the first start migrates a new database, and a busy
    # machine made that take over 30 s (test_first_start, issue 43).
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while time.monotonic() < deadline and not (grpc_port and http_port):
        line = proc.stdout.readline()
        if not line:
            break
        output.append(line)
        if m := re.search(r"OTLP/gRPC listening on [\d.]+:(\d+)", line):
            grpc_port = int(m.group(1))
        if m := re.search(r"OTLP/HTTP and API listening on http://[\d.]+:(\d+)", line):
            http_port = int(m.group(1))
    if not (grpc_port and http_port):
        proc.kill()
        proc.wait()
        proc.stdout.close()
        raise AssertionError("server did not start:\n" + "".join(output))
    server = ServerProcess(proc, grpc_port, http_port, output)
    server.reader = threading.Thread(target=_drain, args=(proc, output), daemon=True)
    server.reader.start()  # a full pipe would block the server's logging
    return server


def descriptor_limit(nofile: int) -> tuple[str, ...]:
    """A command that sets the descriptor limit, then execs the rest of its
    arguments (the pid stays the server's).

    Not `preexec_fn`: that makes Popen fork() instead of vfork(), which runs
    grpc-core's fork handlers in a test process whose gRPC is busy, and the
    child could abort before its exec ("Epoll1Poller encountered epoll_wait
    error: Bad file descriptor"; 1 start in 30 beside a gRPC server in use,
    and a flake of test_http_door_outages, issue 43)."""
    program = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile})); "
        "os.execvp(sys.argv[1], sys.argv[1:])"
    )
    return (sys.executable, "-c", program)


def _drain(proc: subprocess.Popen[str], output: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        output.append(line)


class ExportRefused(Exception):
    """OTLP/HTTP answered an export with something other than 200."""

    def __init__(self, message: str, status: int = 0, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after  # the Retry-After header, if any


class OtlpClient:
    """Pre-encoded protobuf exports to a server process, through either door.

    One kept-alive HTTP connection and one gRPC channel, as an SDK exporter
    holds. The HTTP side is the standard library's client: it is a load
    generator here, and took under half of httpx's CPU per 420 KB request
    (bench/ingest.py shares the machine's two cores with the collector).
    A refused HTTP export raises ExportRefused, a refused gRPC one
    grpc.RpcError; an HTTP export with no answer raises one of
    HTTP_TRANSPORT_ERRORS, and the next export reconnects.
    """

    def __init__(self, server: ServerProcess, key: str, timeout: float = 30) -> None:
        self._http = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=timeout)
        self._headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
        self._channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self._export = self._channel.unary_unary(EXPORT)
        self._auth = f"Bearer {key}"
        self._timeout = timeout

    def export(self, body: bytes, door: str) -> None:
        if door == "http":
            try:
                self._http.request("POST", "/v1/traces", body=body, headers=self._headers)
                reply = self._http.getresponse()
                answer = reply.read()
            except HTTP_TRANSPORT_ERRORS:
                self._http.close()
                raise
            if reply.status != 200:
                raise ExportRefused(
                    f"{reply.status}: {answer.decode(errors='replace')}",
                    reply.status,
                    reply.getheader("retry-after"),
                )
        else:
            self._export(body, metadata=[("authorization", self._auth)], timeout=self._timeout)

    def close(self) -> None:
        self._http.close()
        self._channel.close()


def process_tree(pid: int) -> list[int]:
    """A process and all of its live descendants (a server's decoders).

    Every thread's children: a process started from another thread than the
    main one (a replaced decoder pool's) is listed under that thread."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            pending.extend(int(child) for child in children)
    return found


def decoder_pids(pid: int) -> list[int]:
    """The live decoder processes a collector process started (spawned
    multiprocessing workers; not its resource tracker)."""
    found = []
    for child in process_tree(pid)[1:]:
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in command:
            found.append(child)
    return found


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and all of its descendants (decoders)."""
    total = 0
    for member in process_tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


class MemorySampler:
    """The peak of rss_bytes(pid), sampled every 20 ms in a thread."""

    def __init__(self, pid: int, every_s: float = 0.02) -> None:
        self.pid, self.peak, self._every = pid, 0, every_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self.pid))

    def _run(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid))
            self._done.wait(self._every)
