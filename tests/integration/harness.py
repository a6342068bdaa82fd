"""A real collector on loopback (port 0) and raw clients for both doors."""

from __future__ import annotations

import gzip as gzip_lib
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
from sqlalchemy import text

from bench.support.servers import EXPORT
from collector.service import Service, build
from collector.settings import Settings
from tests.schemas import sqlite_copy_at_head
from tests.waiting import wait_for as wait_for  # the integration tests import it from here

# What a run IS, for tests comparing two deliveries of the same spans: every
# run column but ids derived from the owner and the collector clock's stamps.
RUN_OUTCOME_COLUMNS = (
    "run_key",
    "task_id",
    "status",
    "success",
    "success_source",
    "started_ns",
    "ended_ns",
    "latency_ms",
    "steps",
    "tool_errors",
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "cost_source",
    "error_class",
    "span_count",
    "root_span_id",
)


class FakeClock:
    """The collector's clock, moved by the test (docs/runs.md: timers are injectable)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Collector:
    service: Service
    db_path: Path
    key: str
    http: httpx.Client
    channel: grpc.Channel

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.service.http_port}"

    def post(
        self,
        body: bytes,
        *,
        content_type: str = "application/x-protobuf",
        key: str | None = "default",
        gzip: bool = False,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        sent = dict(headers or {})
        sent.setdefault("content-type", content_type)
        if key is not None:
            sent["authorization"] = f"Bearer {self.key if key == 'default' else key}"
        if gzip:
            body = gzip_lib.compress(body)
            sent["content-encoding"] = "gzip"
        return self.http.post(f"{self.http_url}/v1/traces", content=body, headers=sent)

    def export_grpc(
        self, body: bytes, *, key: str | None = "default", compress: bool = False
    ) -> tuple[Any, grpc.Call]:
        call = self.channel.unary_unary(EXPORT, request_serializer=None, response_deserializer=None)
        metadata = []
        if key is not None:
            metadata.append(("authorization", f"Bearer {self.key if key == 'default' else key}"))
        compression = grpc.Compression.Gzip if compress else None
        return call.with_call(body, metadata=metadata, compression=compression, timeout=30)

    @property
    def dialect(self) -> str:
        return self.service.db.dialect

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """Run SQL with `?` placeholders on whichever database the collector uses."""
        names = iter(range(len(args)))
        named = re.sub(r"\?", lambda _: f":p{next(names)}", sql)
        with self.service.db.reader.connect() as conn:
            result = conn.execute(text(named), {f"p{i}": arg for i, arg in enumerate(args)})
            return [tuple(row) for row in result]

    def execute(self, sql: str) -> None:
        """A write from outside the collector (tests of damage and recovery)."""
        with self.service.db.writer.begin() as conn:
            conn.execute(text(sql))

    @contextmanager
    def writes_blocked(self) -> Iterator[None]:
        """Hold a lock that makes the collector's batch writer wait."""
        with self.service.db.writer.connect() as conn:
            conn.begin()  # SQLite: BEGIN IMMEDIATE takes the database's write lock
            if self.dialect == "postgresql":
                conn.execute(text("LOCK TABLE spans IN EXCLUSIVE MODE"))
            try:
                yield
            finally:
                conn.rollback()

    def span_count(self) -> int:
        return int(self.query("SELECT count(*) FROM spans")[0][0])

    def settle(self) -> None:
        """Recompute pending runs now, until none is left, and bring the board
        up to date (the collector does both within about a second)."""
        for _ in range(20):
            self.service.recomputer.process_pending(all_now=True)
            if not self.service.recomputer.has_pending():
                break
        self.service.maintenance.catch_up_board()


def collector_settings(db_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(
        database_url=f"sqlite:///{db_path}",
        grpc_port=0,
        http_port=0,
        assembly_delay_s=0.01,
        sweep_interval_s=0.2,
        sqlite_synchronous="NORMAL",
        decode_workers=0,
    )
    values.update(overrides)
    return Settings(**values)


@contextmanager
def running_collector(
    tmp_path: Path, clock: Callable[[], float] = time.time, **overrides: Any
) -> Iterator[Collector]:
    db_path = tmp_path / "collector.db"
    if "database_url" not in overrides and not db_path.exists():
        sqlite_copy_at_head(db_path)  # migrating is not under test here
    service = build(collector_settings(db_path, **overrides), clock=clock)
    key = service.keys.create("owner-a")
    service.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{service.grpc_port}")
    client = httpx.Client(timeout=30)
    try:
        yield Collector(service, db_path, key, client, channel)
    finally:
        client.close()
        channel.close()
        service.stop()
