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
from api import create_api
from collector.admission import InflightBudget
from collector.agents import AgentDirectory
from collector.assembler import RunAssembler
from collector.assembly.runs import Timers
from collector.decoding import Decoder, default_workers
from collector.ingest import Ingest
from collector.metrics import Metrics
from collector.pipeline import IngestPipeline
from collector.receivers.grpc_door import GrpcDoor, PortInUse
from collector.receivers.http_door import HttpDoor
from collector.settings import Settings
from collector.storage.engine import Database, create_schema, open_database
from collector.storage.keys import KeyStore
from collector.storage.reads import SqlReadStore

log = logging.getLogger(__name__)
Clock = Callable[[], float]

__all__ = ["PortInUse", "Service", "build"]


@dataclass
class Service:
    settings: Settings
    db: Database
    keys: KeyStore
    metrics: Metrics
    pipeline: IngestPipeline
    assembler: RunAssembler
    grpc: GrpcDoor
    http: HttpDoor
    reads: SqlReadStore
    decoder: Decoder
    grpc_port: int = 0
    http_port: int = 0
    _uvicorn: uvicorn.Server | None = None
    _http_thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind both doors (PortInUse if taken), then start serving."""
        s = self.settings
        sock = _bind_http(s.host, s.http_port)
        self.http_port = sock.getsockname()[1]
        self.grpc_port = self.grpc.bind(s.host, s.grpc_port)
        self.decoder.warm_up()
        self.pipeline.start()
        self.assembler.start()
        self.grpc.start()
        app = create_api(self.reads, self.reads, metrics=self.metrics.render, insecure=s.insecure)
        app.router.routes.insert(0, self.http.route())
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
        self.pipeline.close()  # every accepted span committed
        self.assembler.stop()  # runs of the last spans computed and stored
        self.pipeline.shutdown()
        self.db.dispose()


def _bind_http(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
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
    timers = Timers(settings.orphan_grace_s, settings.run_timeout_s)
    assembler = RunAssembler(
        db,
        timers,
        clock,
        metrics,
        delay_s=settings.assembly_delay_s,
        sweep_interval_s=settings.sweep_interval_s,
        retention_s=settings.span_retention_days * 86400.0,
    )
    pipeline = IngestPipeline(
        db, settings.queue_max_spans, assembler.committed, metrics, clock=clock
    )
    assembler.attach(pipeline)
    limits = proto.Limits(max_spans=settings.max_spans_per_request)
    directory = AgentDirectory(db)
    workers = settings.decode_workers
    decoder = Decoder(default_workers() if workers is None else workers)
    ingest = Ingest(
        keys,
        directory,
        pipeline,
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
        pipeline=pipeline,
        assembler=assembler,
        grpc=GrpcDoor(ingest, metrics, settings.max_body_bytes),
        http=HttpDoor(ingest, metrics, settings.max_body_bytes),
        reads=reads,
        decoder=decoder,
    )
