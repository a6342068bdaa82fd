"""The collector as a process: durability across SIGKILL, drain on SIGTERM, CLI."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import httpx
import pytest
from sqlalchemy import create_engine, text

from bench.support.otlp import new_span_id, new_trace_id, request, span
from bench.support.servers import (
    HTTP_TRANSPORT_ERRORS,
    ExportRefused,
    OtlpClient,
    ServerProcess,
    cli,
    start_server,
)
from tests.waiting import wait_for


def stored_ids(database_url: str) -> set[str]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return {row[0] for row in conn.execute(text("SELECT span_id FROM spans"))}
    finally:
        engine.dispose()


def exporter_loop(
    door: str, server: ServerProcess, key: str, acked: list[str], stop: threading.Event
) -> None:
    """Send small unique requests until stopped; remember every span answered OK."""
    client = OtlpClient(server, key, timeout=5)
    while not stop.is_set():
        trace_id = new_trace_id()
        spans = [span(trace_id, new_span_id(), f"s{i}") for i in range(20)]
        try:
            client.export(request(spans).SerializeToString(), door)
        except (*HTTP_TRANSPORT_ERRORS, grpc.RpcError, ExportRefused):
            time.sleep(0.01)
            continue
        acked.extend(s.span_id.hex() for s in spans)
    client.close()


def run_exporters(
    server: ServerProcess, key: str, seconds: float, stop_server: Callable[[], None]
) -> list[str]:
    acked: list[str] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=exporter_loop, args=(door, server, key, acked, stop))
        for door in ["http", "grpc"] * 2
    ]
    for thread in threads:
        thread.start()
    time.sleep(seconds)  # traffic for a while, then (a busy machine is slow) some answered
    wait_for(lambda: len(acked), until=lambda count: count > 100, what="spans acknowledged")
    stop_server()
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join(30)
    return acked


@pytest.mark.timing
def test_sigkill_loses_no_acknowledged_span(database_url: str) -> None:
    key = cli("keys", "create", "--owner", "me", "--database-url", database_url).stdout.strip()
    server = start_server(database_url)
    acked = run_exporters(server, key, 2.0, server.proc.kill)
    assert server.wait(10) == -signal.SIGKILL
    assert len(acked) > 100
    restarted = start_server(database_url)
    try:
        assert set(acked) <= stored_ids(database_url)
    finally:
        restarted.stop()


def run_rows(database_url: str) -> list[tuple[str, int]]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT status, span_count FROM runs ORDER BY trace_id"))
            return [(str(status), int(count)) for status, count in rows]
    finally:
        engine.dispose()


@pytest.mark.timing
def test_runs_not_recomputed_before_a_sigkill_are_recomputed_on_start(database_url: str) -> None:
    """Traces sent over several requests, all acknowledged, then kill -9 before
    the recomputer ran (a long debounce holds it): the restarted collector
    finds them and stores their complete runs within seconds."""
    key = cli("keys", "create", "--owner", "me", "--database-url", database_url).stdout.strip()
    server = start_server(database_url, "--assembly-delay", "600")
    client = OtlpClient(server, key)
    for i in range(6):
        trace_id, root = new_trace_id(), new_span_id()
        parts = [
            [span(trace_id, new_span_id(), "execute_tool", parent=root) for _ in range(4)],
            [span(trace_id, new_span_id(), "chat", parent=root) for _ in range(4)],
            [span(trace_id, root, "badge.run", attributes={"badge.task.id": f"t{i}"})],
        ]
        for part in parts:  # each one acknowledged before the next is sent
            client.export(request(part).SerializeToString(), ["http", "grpc"][i % 2])
    client.close()
    stale = run_rows(database_url)
    assert len(stale) == 6 and all(status == "running" for status, _ in stale)
    server.proc.kill()
    assert server.wait(10) == -signal.SIGKILL
    restarted = start_server(database_url)
    try:
        deadline = time.monotonic() + 30
        while run_rows(database_url) != [("completed", 9)] * 6 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert run_rows(database_url) == [("completed", 9)] * 6
    finally:
        restarted.stop()


@pytest.mark.timing
def test_sigterm_drains_and_exits_zero(database_url: str) -> None:
    key = cli("keys", "create", "--owner", "me", "--database-url", database_url).stdout.strip()
    server = start_server(database_url)
    acked = run_exporters(server, key, 1.0, server.proc.terminate)
    assert server.wait(60) == 0
    assert set(acked) <= stored_ids(database_url)


def test_port_in_use_exits_non_zero_with_a_clear_message(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        result = cli(
            "serve",
            "--database-url",
            f"sqlite:///{tmp_path / 'p.db'}",
            "--grpc-port",
            "0",
            "--http-port",
            str(port),
            "--insecure",
            check=False,
        )
        assert result.returncode != 0
        assert f"cannot bind OTLP/HTTP to 127.0.0.1:{port}" in result.stderr
        result = cli(
            "serve",
            "--database-url",
            f"sqlite:///{tmp_path / 'p.db'}",
            "--grpc-port",
            str(port),
            "--http-port",
            "0",
            "--insecure",
            check=False,
        )
        assert result.returncode != 0
        assert "cannot bind OTLP/gRPC" in result.stderr
    finally:
        taken.close()


def test_first_serve_prints_a_key_once_and_it_works(database_url: str) -> None:
    server = start_server(database_url)
    printed = "".join(server.output)
    # started with --http-port 0 and --grpc-port 0: the ports printed are the bound ones
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{server.http_port}\n" in printed
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{server.grpc_port} " in printed
    key = printed.split("authorization=Bearer ")[1].split('"')[0]
    body = request([span(new_trace_id(), new_span_id(), "x")]).SerializeToString()
    reply = httpx.post(
        f"http://127.0.0.1:{server.http_port}/v1/traces",
        content=body,
        headers={"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"},
    )
    assert reply.status_code == 200
    assert server.stop() == 0
    again = start_server(database_url)
    assert "Bearer" not in "".join(again.output)
    again.stop()


def test_insecure_warns_loudly_and_accepts_keyless(database_url: str) -> None:
    server = start_server(database_url, "--insecure")
    try:
        assert "WARNING: --insecure" in "".join(server.output)
        body = request([span(new_trace_id(), new_span_id(), "x")]).SerializeToString()
        reply = httpx.post(
            f"http://127.0.0.1:{server.http_port}/v1/traces",
            content=body,
            headers={"content-type": "application/x-protobuf"},
        )
        assert reply.status_code == 200
    finally:
        server.stop()
    engine = create_engine(database_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT owner FROM spans")).all() == [("local",)]
    engine.dispose()


def test_keys_cli_create_list_revoke(database_url: str) -> None:
    url = database_url
    created = cli("keys", "create", "--owner", "team", "--role", "grader", "--database-url", url)
    key = created.stdout.strip()
    assert key.startswith("bdg_") and "\n" not in key
    assert "shown once" in created.stderr
    listing = cli("keys", "list", "--database-url", url).stdout
    assert key[:12] in listing and "grader" in listing and key not in listing
    cli("keys", "revoke", key[:12], "--database-url", url)
    assert "revoked" in cli("keys", "list", "--database-url", url).stdout
    assert cli("keys", "revoke", key[:12], "--database-url", url, check=False).returncode == 1


def test_grpc_health_service_reports_serving(tmp_path: Path) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server = start_server(tmp_path / "h.db", "--insecure")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        server.stop()
