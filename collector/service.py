"""Composition root: build every part from one Settings, start, drain, stop.

Shutdown order matters for "accepted = durable": stop the doors first (they
finish in-flight requests, which wait for their commit), then drain and
commit the queue, then recompute the runs it touched.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn

import proto
from api.app import create_api
from collector.assembly.runs import Timers
from collector.ingest.admission import InflightBudget
from collector.ingest.decoding import Decoder, default_workers, tune_gc
from collector.ingest.path import Ingest
from collector.metrics import Metrics
from collector.receivers.grpc_door import GrpcDoor, PortInUse
from collector.receivers.http_door import HttpDoor
from collector.runs.fresh import RunCommitHook
from collector.runs.grades import GradeDesk
from collector.runs.recompute import RunRecomputer
from collector.settings import Settings
from collector.storage.agents import AgentDirectory
from collector.storage.engine import Database, open_database
from collector.storage.keys import KeyStore
from collector.storage.migrate import create_schema
from collector.storage.reads import SqlReadStore
from collector.storage.weights import SqlWeightStore
from collector.writer import BatchWriter

log = logging.getLogger(__name__)
Clock = Callable[[], float]

__all__ = ["PortInUse", "Service", "build"]


@dataclass
class Service:
    settings: Settings
    db: Database
    keys: KeyStore
    metrics: Metrics
    writer: BatchWriter
    recomputer: RunRecomputer
    grpc: GrpcDoor
    http: HttpDoor
    reads: SqlReadStore
    decoder: Decoder
    grades: GradeDesk
    grpc_port: int = 0
    http_port: int = 0
    _uvicorn: uvicorn.Server | None = None
    _http_thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind both doors (PortInUse if taken), then start serving."""
        s = self.settings
        tune_gc()
        sock = _bind_http(s.host, s.http_port)
        self.http_port = sock.getsockname()[1]
        self.grpc_port = self.grpc.bind(s.host, s.grpc_port)
        self.decoder.warm_up()
        if self.db.recent_keys is not None:  # SQLite: the stored keys, before any export
            with self.db.reader.begin() as conn:  # one snapshot
                self.db.recent_keys.warm(conn)
        self.writer.start()
        self.recomputer.start()
        self.grpc.start()
        app = create_api(
            self.reads,
            self.reads,
            SqlWeightStore(self.db),
            self.grades,
            metrics=self.metrics.render,
            insecure=s.insecure,
            routes=[self.http.route()],
        )
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=30
        )
        self._uvicorn = uvicorn.Server(config)
        server = self._uvicorn
        self._http_thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="http", daemon=True
        )
        self._http_thread.start()
        while not server.started and self._http_thread.is_alive():
            time.sleep(0.01)

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        self.grpc.stop(grace_s=10)
        if self._http_thread is not None:
            self._http_thread.join(30)
        self.decoder.close()
        self.writer.close()  # every accepted span committed
        self.recomputer.stop()  # runs of the last spans computed and stored
        self.writer.shutdown()
        self.db.dispose()


def _bind_http(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # A restart binds while the last run's connections sit in TIME_WAIT (as
    # uvicorn's own sockets do); a second listener on the port is still refused.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortInUse(f"cannot bind OTLP/HTTP to {host}:{port}: {exc.strerror}") from None
    # Accepted connections inherit this: without it a keep-alive client waits
    # ~40 ms per response (Nagle against delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def build(settings: Settings, clock: Clock = time.time) -> Service:
    db = open_database(settings.database_url, synchronous=settings.sqlite_synchronous)
    create_schema(db)
    metrics = Metrics()
    keys = KeyStore(db)
    timers = Timers(settings.orphan_grace_s, settings.run_timeout_s, settings.max_run_latency_s)
    recomputer = RunRecomputer(
        db,
        timers,
        clock,
        metrics,
        delay_s=settings.assembly_delay_s,
        sweep_interval_s=settings.sweep_interval_s,
        retention_s=settings.span_retention_days * 86400.0,
        retention_every_s=settings.retention_interval_s,
    )
    writer = BatchWriter(
        db, settings.queue_max_spans, RunCommitHook(recomputer, metrics), metrics, clock=clock
    )
    recomputer.attach(writer)
    limits = proto.Limits(max_spans=settings.max_spans_per_request)
    directory = AgentDirectory(db)
    workers = settings.decode_workers
    decoder = Decoder(default_workers() if workers is None else workers)
    ingest = Ingest(
        keys,
        directory,
        writer,
        metrics,
        clock,
        limits,
        decoder,
        max_body_bytes=settings.max_body_bytes,
        timers=timers,
        budget=InflightBudget(settings.max_inflight_bytes, metrics),
        insecure=settings.insecure,
    )
    reads = SqlReadStore(db, keys, directory, timers, clock)
    return Service(
        settings=settings,
        db=db,
        keys=keys,
        metrics=metrics,
        writer=writer,
        recomputer=recomputer,
        grpc=GrpcDoor(ingest, metrics, settings.max_body_bytes),
        http=HttpDoor(ingest, metrics, settings.max_body_bytes),
        reads=reads,
        decoder=decoder,
        grades=GradeDesk(writer, clock),
    )
