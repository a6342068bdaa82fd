"""The door attacks of issue 29, one row each, for bench/overload.py.

Each starts a collector process with its default settings on a fresh
database, holds the attack open for `HOLD_S` while a victim (another
owner) exports once a second through the attacked door and checks health,
then reports: the victim's answers and their slowest time, the health
checks, what became of the attacker's streams, uploads or connections
(answered how, after how long), and how much the server logged meanwhile.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.support.otlp import simple_trace
from bench.support.servers import EXPORT, ServerProcess, cli, start_server

HOLD_S = 40.0  # longer than the body timeout (30 s), so its effect shows
LOW_NOFILE = 1024  # the common soft limit; the 20,000 took 10x longer to reach


@dataclass
class Row:
    attack: str
    victim: Counter[str] = field(default_factory=Counter)
    victim_max_s: float = 0.0
    health: Counter[str] = field(default_factory=Counter)
    attacker: Counter[str] = field(default_factory=Counter)  # "answer after ~N s"
    log_bytes: int = 0

    def cells(self) -> list[str]:
        return [
            self.attack,
            _counts(self.victim) + f" (slowest {self.victim_max_s:.1f} s)",
            _counts(self.health),
            _counts(self.attacker),
            f"{self.log_bytes:,} B",
        ]


def _counts(counts: Counter[str]) -> str:
    return ", ".join(f"{n} x {what}" for what, n in sorted(counts.items())) or "none"


def _bucket(seconds: float) -> str:
    """Times rounded for a table: when something was answered or closed."""
    return f"{seconds:.0f} s" if seconds >= 1.5 else "at once"


def victim(server: ServerProcess, key: str, door: str, row: Row, stop: threading.Event) -> None:
    """One export a second through `door`, and a health check, until `stop`."""
    body = simple_trace().SerializeToString()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    export = channel.unary_unary(EXPORT)
    health = health_pb2_grpc.HealthStub(channel)
    http = httpx.Client(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10)
    headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
    while not stop.wait(1.0):
        began = time.monotonic()
        try:
            if door == "grpc":
                export(body, metadata=[("authorization", f"Bearer {key}")], timeout=10)
                answer = "OK"
            else:
                answer = str(http.post("/v1/traces", content=body, headers=headers).status_code)
        except grpc.RpcError as exc:
            answer = exc.code().name
        except httpx.HTTPError as exc:
            answer = type(exc).__name__
        row.victim[answer] += 1
        row.victim_max_s = max(row.victim_max_s, time.monotonic() - began)
        try:
            if door == "grpc":
                health.Check(health_pb2.HealthCheckRequest(), timeout=5)
                row.health["SERVING"] += 1
            else:
                row.health[str(http.get("/healthz", timeout=5).status_code)] += 1
        except grpc.RpcError as exc:
            row.health[exc.code().name] += 1
        except httpx.HTTPError as exc:
            row.health[type(exc).__name__] += 1
    http.close()
    channel.close()


def run(
    attack: str, server: ServerProcess, key: str, door: str, hold: Callable[[Row], None]
) -> Row:
    row = Row(attack)
    stop = threading.Event()
    logged = sum(map(len, server.output))
    thread = threading.Thread(target=victim, args=(server, key, door, row, stop))
    thread.start()
    try:
        hold(row)
    finally:
        stop.set()
        thread.join()
    row.log_bytes = sum(map(len, server.output)) - logged
    return row


def stalled_streams(server: ServerProcess, count: int, key: str | None) -> Callable[[Row], None]:
    def hold(row: Row) -> None:
        channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        release = threading.Event()

        def never() -> Iterator[bytes]:
            release.wait()
            yield from ()

        call = channel.stream_unary(EXPORT)
        metadata = [("authorization", f"Bearer {key}")] if key else []
        began = time.monotonic()
        calls = [call.future(never(), metadata=metadata, timeout=HOLD_S + 30) for _ in range(count)]
        ended: dict[int, str] = {}
        while time.monotonic() - began < HOLD_S:
            for index, future in enumerate(calls):
                if index not in ended and future.done():
                    code = future.exception().code().name  # type: ignore[union-attr]
                    ended[index] = f"{code} {_bucket(time.monotonic() - began)}"
            time.sleep(0.1)
        row.attacker.update(ended.values())
        if count > len(ended):
            row.attacker[f"still open after {HOLD_S:.0f} s"] += count - len(ended)
        release.set()
        channel.close()

    return hold


def declared_uploads(server: ServerProcess, key: str | None) -> Callable[[Row], None]:
    """Two uploads that declare 16 MiB, send one byte, and wait."""

    def hold(row: Row) -> None:
        with ExitStack() as stack:
            socks = [
                stack.enter_context(socket.create_connection(("127.0.0.1", server.http_port)))
                for _ in range(2)
            ]
            auth = f"authorization: Bearer {key}\r\n" if key else ""
            head = (
                "POST /v1/traces HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                f"content-type: application/x-protobuf\r\n{auth}content-length: 16777216\r\n\r\n"
            )
            for sock in socks:
                sock.sendall(head.encode() + b"\n")
            row.attacker.update(_watch(socks, HOLD_S))

    return hold


def idle_connections(server: ServerProcess, idle: int, trickling: int) -> Callable[[Row], None]:
    """`idle` connections that send nothing, `trickling` that send a header line every 5 s."""

    def hold(row: Row) -> None:
        with ExitStack() as stack:
            socks: list[socket.socket] = []
            for _ in range(idle + trickling):
                try:
                    sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=5)
                except OSError:
                    row.attacker["connect failed"] += 1
                    continue
                socks.append(stack.enter_context(sock))
            for sock in socks[:trickling]:
                sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            stop = threading.Event()

            def drip() -> None:
                n = 0
                while not stop.wait(5.0):
                    n += 1
                    for sock in socks[:trickling]:
                        try:
                            sock.sendall(f"x-drip-{n}: 1\r\n".encode())
                        except OSError:
                            pass

            dripping = threading.Thread(target=drip)
            dripping.start()
            try:
                row.attacker.update(_watch(socks, HOLD_S))
            finally:
                stop.set()
                dripping.join()

    return hold


def _watch(socks: list[socket.socket], seconds: float) -> Counter[str]:
    """How and when the server answered or closed each connection."""
    began = time.monotonic()
    seen: dict[int, str] = {}
    for sock in socks:
        sock.setblocking(False)
    while time.monotonic() - began < seconds:
        for index, sock in enumerate(socks):
            if index in seen:
                continue
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            status = data[9:12].decode(errors="replace") if data.startswith(b"HTTP/1.1") else ""
            when = _bucket(time.monotonic() - began)
            seen[index] = f"{status} + closed {when}" if status else f"closed {when}"
        time.sleep(0.2)
    found = Counter(seen.values())
    if len(socks) > len(seen):
        found[f"still open after {seconds:.0f} s"] += len(socks) - len(seen)
    return found


def attack_rows(fresh: Callable[[], str]) -> list[Row]:
    """Every attack once, each on a fresh database and server."""
    rows = []

    def server_and_keys(*extra: str, nofile: int | None = None) -> tuple[ServerProcess, str, str]:
        url = fresh()
        cli("db", "upgrade", "--database-url", url)  # keys create makes no database
        victim_key = cli("keys", "create", "--owner", "victim", "--database-url", url)
        attacker_key = cli("keys", "create", "--owner", "attacker", "--database-url", url)
        server = start_server(url, *extra, nofile=nofile)
        return server, victim_key.stdout.strip(), attacker_key.stdout.strip()

    plan: list[
        tuple[str, str, tuple[str, ...], Callable[[ServerProcess, str], Callable[[Row], None]]]
    ] = [
        (
            "gRPC: 33 streams, no key, no message",
            "grpc",
            (),
            lambda s, k: stalled_streams(s, 33, None),
        ),
        (
            "gRPC: 64 streams, valid key, no message",
            "grpc",
            (),
            lambda s, k: stalled_streams(s, 64, k),
        ),
        ("HTTP: 2 uploads declare 16 MiB, send 1 byte", "http", (), declared_uploads),
        (
            "same, keyless under --insecure",
            "http",
            ("--insecure",),
            lambda s, k: declared_uploads(s, None),
        ),
        (
            f"HTTP: 1,450 idle + 50 trickling connections, {LOW_NOFILE} descriptors",
            "http",
            (),
            lambda s, k: idle_connections(s, 1450, 50),
        ),
    ]
    for name, door, extra, attack in plan:
        nofile = LOW_NOFILE if "descriptors" in name else None
        server, victim_key, attacker_key = server_and_keys(*extra, nofile=nofile)
        try:
            rows.append(run(name, server, victim_key, door, attack(server, attacker_key)))
        finally:
            try:
                server.stop()
            except subprocess.TimeoutExpired:  # a door that never lets go
                server.proc.kill()
                server.wait()
    return rows


def print_rows(rows: list[Row]) -> None:
    header = ["attack", "victim's exports (1/s)", "health checks", "attacker's", "server log"]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |")
