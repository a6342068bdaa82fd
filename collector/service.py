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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import uvicorn

import proto
from api.app import create_api
from api.read_gate import ReadLimits
from collector.agent_metrics import AgentGauges
from collector.certificates.keyfile import DEFAULT_NAME, KeyFile
from collector.conventions import ConventionSet, load_active
from collector.ingest.admission import InflightBudget
from collector.ingest.decoder_pool import Decoder
from collector.ingest.decoding import default_workers, tune_gc
from collector.ingest.path import Ingest
from collector.metrics import Metrics
from collector.receivers.grpc_door import GrpcDoor, PortInUse
from collector.receivers.http_door import HttpDoor
from collector.receivers.http_guard import ConnectionGuard
from collector.receivers.http_protocol import protocol_class
from collector.receivers.limits import ACCEPT_BATCH, DoorLimits, fit_descriptors
from collector.runs.fresh import RunCommitHook
from collector.runs.grades import GradeDesk
from collector.runs.maintenance import Maintenance
from collector.runs.plans import PlanDesk
from collector.runs.queue import TraceQueue
from collector.runs.reclassify import Reclassifier
from collector.runs.reclassifying import BackgroundReclassification
from collector.runs.recompute import RunRecomputer
from collector.settings import Settings
from collector.storage.agents import AgentDirectory
from collector.storage.certificates import Signing
from collector.storage.engine import Database, open_database
from collector.storage.keys import KeyStore
from collector.storage.migrate import create_schema
from collector.storage.read_side import ReadSide, read_side, run_timers
from collector.types import Clock
from collector.writer import BatchWriter

log = logging.getLogger(__name__)

__all__ = ["PortInUse", "Service", "build"]


@dataclass
class Service:
    settings: Settings
    db: Database
    keys: KeyStore
    metrics: Metrics
    writer: BatchWriter
    recomputer: RunRecomputer
    maintenance: Maintenance
    grpc: GrpcDoor
    http: HttpDoor
    read: ReadSide
    decoder: Decoder
    grades: GradeDesk
    plans: PlanDesk
    limits: DoorLimits
    agent_gauges: AgentGauges
    conventions: ConventionSet
    reclassification: BackgroundReclassification
    signing_key: KeyFile | None = None  # None: certificates answer 503 (docs/certificates.md)
    signing_refused: str | None = None  # why the key cannot sign, said at start
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
        self.db.backend.warm()  # SQLite: the stored keys into memory, before any export
        self.writer.start()
        self.recomputer.start()
        self.maintenance.start()
        self.reclassification.start()  # CONVENTIONS.md section 5, in the lease holder
        self.grpc.start()
        app = create_api(
            self.read.reads,
            self.keys,
            weights=self.read.weights,
            grades=self.grades,
            plans=self.plans,
            agent_writes=self.read.agent_writes,
            certificate_reads=self.read.certificate_reads,
            certificates=self.read.certificates,
            metrics=self.render_metrics,
            insecure=s.insecure,
            routes=self.http.routes(),
            host=s.host,
            allowed_hosts=s.allowed_hosts,
            read_limits=ReadLimits(
                slots=s.max_concurrent_reads,
                line=s.max_waiting_reads,
                refused=lambda keyed: self.metrics.reads_refused.labels(
                    "keyed" if keyed else "keyless"
                ).inc(),
            ),
            store_fault=self.db.health.problem,
            readiness=self.readiness,
        )
        guard = ConnectionGuard(self.limits, self.metrics)
        config = uvicorn.Config(
            guard.wrap(app),
            http=protocol_class(guard),  # uvicorn's httptools protocol, with deadlines and bounds
            backlog=ACCEPT_BATCH,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=30,
        )
        self._uvicorn = uvicorn.Server(config)
        server = self._uvicorn

        async def serve() -> None:
            asyncio.get_running_loop().set_exception_handler(guard.on_loop_error)
            await server.serve(sockets=[sock])

        self._http_thread = threading.Thread(
            target=lambda: asyncio.run(serve()), name="http", daemon=True
        )
        self._http_thread.start()
        while not server.started and self._http_thread.is_alive():
            time.sleep(0.01)

    def readiness(self) -> str | None:
        """Why this collector should get no exports now (/readyz 503), or None.

        Not while its database cannot be written (storage.health: from the
        first failure until the batch writer's probe commits), nor while no
        decoder process can decode (between a dead one and its replacement)."""
        if not self.decoder.ready():
            return "no decoder process can decode now"
        if self.db.health.down:
            return "the database is unavailable"
        if not self.read.reads.ready():
            return "the database is unreachable"
        return None

    def render_metrics(self) -> bytes:
        """/metrics: the collector's own metrics, then each recent agent's gauges."""
        return self.metrics.render() + self.agent_gauges.render()

    def stop(self) -> None:
        self.reclassification.stop()  # its batch committed while the writer still takes jobs
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        self.grpc.stop(grace_s=10)
        if self._http_thread is not None:
            self._http_thread.join(30)
        self.decoder.close()
        self.writer.close()  # every accepted span committed
        self.recomputer.stop()  # runs of the last spans computed and stored
        self.maintenance.stop()  # and the board brought up to date
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
    sock.listen(ACCEPT_BATCH)  # uvicorn listens again with the same backlog
    sock.set_inheritable(True)
    return sock


def signing_key_file(settings: Settings, db: Database) -> KeyFile | None:
    """The signing key (docs/certificates.md): the configured file, else one
    beside a SQLite database file, created if missing; None on a database
    server without the setting (processes there must share one key).
    KeyFileError when the file cannot be read or written."""
    if settings.signing_key:
        return KeyFile.open(Path(settings.signing_key).expanduser())
    if db.folder is not None:
        return KeyFile.open(db.folder / DEFAULT_NAME)
    return None


def _version() -> str:
    try:
        return metadata.version("badge-collector")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "0+unknown"


def build(settings: Settings, clock: Clock = time.time) -> Service:
    """Every part, from the settings. The conventions load first: a user's
    file that does not load (ConventionError) stops the collector before it
    opens a database or a door (CONVENTIONS.md section 4)."""
    conventions = load_active(settings.conventions)
    log.info(
        "conventions %s: %s",
        conventions.digest,
        ", ".join(f"{c.name} v{c.version}" for c in conventions.conventions),
    )
    db = open_database(settings.database_url, synchronous=settings.sqlite_synchronous)
    create_schema(db)
    key_file = signing_key_file(settings, db)
    # Certificates name the conventions digest (CERTS.md section 2).
    signing = Signing(key_file, conventions.digest, _version()) if key_file is not None else None
    metrics = Metrics()
    keys = KeyStore(db)
    timers = run_timers(settings)
    # The queue first, then the writer that fills it, then the two that work
    # from it through the writer's jobs: recomputation and maintenance.
    queue = TraceQueue()
    writer = BatchWriter(
        db, settings.queue_max_spans, RunCommitHook(queue, metrics), metrics, clock=clock
    )
    recomputer = RunRecomputer(
        db,
        timers,
        clock,
        metrics,
        queue,
        writer,
        delay_s=settings.assembly_delay_s,
        conventions_digest=conventions.digest,
    )
    maintenance = Maintenance(
        db,
        writer,
        queue,
        clock,
        sweep_interval_s=settings.sweep_interval_s,
        retention_s=settings.span_retention_days * 86400.0,
        retention_every_s=settings.retention_interval_s,
        grade_wait_s=settings.grade_wait_days * 86400.0,
    )
    # History follows the rules (CONVENTIONS.md section 5): runs recognised
    # under other conventions are recomputed in the background.
    reclassification = BackgroundReclassification(
        Reclassifier(
            db,
            conventions,
            timers,
            clock,
            writer,
            metrics=metrics,
            paused=recomputer.paused,
            recheck=queue.notify,
        ),
        db,
        maintenance.leads,
    )
    limits = proto.Limits(max_spans=settings.max_spans_per_request)
    directory = AgentDirectory(db)
    workers = settings.decode_workers
    decoder = Decoder(default_workers() if workers is None else workers, conventions)
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
        health=db.health,
        max_agents_per_owner=settings.max_agents_per_owner,
        insecure=settings.insecure,
    )
    door_limits = fit_descriptors(
        DoorLimits(
            max_body_bytes=settings.max_body_bytes,
            max_connections=settings.max_connections,
            header_timeout_s=settings.header_timeout_s,
            body_timeout_s=settings.body_timeout_s,
            idle_timeout_s=settings.idle_timeout_s,
            grpc_max_concurrent_exports=settings.grpc_max_concurrent_exports,
        )
    )
    read = read_side(db, directory, settings, clock, signing)
    return Service(
        settings=settings,
        db=db,
        keys=keys,
        metrics=metrics,
        writer=writer,
        recomputer=recomputer,
        maintenance=maintenance,
        grpc=GrpcDoor(ingest, metrics, door_limits),
        http=HttpDoor(ingest, metrics, settings.max_body_bytes),
        read=read,
        decoder=decoder,
        grades=GradeDesk(writer, clock, quota_bytes=settings.grade_quota_bytes),
        plans=PlanDesk(writer, clock, queue),
        limits=door_limits,
        agent_gauges=AgentGauges(
            db,
            clock,
            max_agents=settings.metrics_max_agents,
            window_s=settings.metrics_window_days * 86400.0,
            refresh_s=settings.metrics_refresh_s,
        ),
        conventions=conventions,
        reclassification=reclassification,
        signing_key=key_file,
        signing_refused=read.certificates.register_key(),
    )
