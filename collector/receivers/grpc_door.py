"""OTLP/gRPC on :4317: TraceService/Export plus the standard health service.

Export is registered with a pass-through request deserializer, so a
malformed message reaches `proto` and is refused with INVALID_ARGUMENT
instead of failing inside grpcio as INTERNAL (docs/otlp.md "Answers").

It is registered client-streaming on this side (the wire is the same as a
unary call's): grpcio reads a unary request before the handler runs, with
no timeout, on a handler thread. As a streaming handler, Export checks the
key first, then reads the one message under a deadline (`body_timeout_s`),
so a stream that never sends holds a thread for that long at most, and one
with a bad key not at all; one owner's calls waiting for their message hold
at most half the slots. `grpc_gate` refuses keyless calls and calls past
`grpc_max_concurrent_exports` before any thread is taken.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

import proto
from collector.errors import (
    BadRequest,
    ClientGone,
    IngestError,
    Internal,
    Overloaded,
    ReceiveTimeout,
)
from collector.ingest.export import Outcome, Wire, run_blocking
from collector.ingest.path import Ingest
from collector.metrics import Metrics
from collector.receivers.deadlines import Deadlines
from collector.receivers.grpc_gate import ExportGate, WaitingShare, metadata
from collector.receivers.grpc_status import abort, end_call
from collector.receivers.limits import DoorLimits

log = logging.getLogger(__name__)
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
EXPORT = f"/{SERVICE}/Export"
TRANSPORT = "grpc"
# Threads beyond the Export slots: the gate's refusals and health checks,
# which return at once, always find one.
_SPARE_THREADS = 8


class PortInUse(OSError):
    """The gRPC port could not be bound."""


class GrpcDoor:
    def __init__(self, ingest: Ingest, metrics: Metrics, limits: DoorLimits) -> None:
        self._ingest = ingest
        self._metrics = metrics
        self._limits = limits
        self._deadlines: Deadlines | None = None
        slots = limits.grpc_max_concurrent_exports
        self._waiting = WaitingShare(slots // 2)
        self._server = grpc.server(
            # A call's message is read only once a thread takes it, so the
            # slots bound what gRPC holds before admission (slots x body limit).
            futures.ThreadPoolExecutor(
                max_workers=slots + _SPARE_THREADS, thread_name_prefix="grpc"
            ),
            interceptors=[ExportGate(ingest, metrics, EXPORT, slots)],
            options=_server_options(limits),
        )
        handler = grpc.stream_unary_rpc_method_handler(
            self._export,
            request_deserializer=None,  # bytes in: proto/ decodes and judges them
            response_serializer=lambda message: message.SerializeToString(),
        )
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),)
        )
        self._health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self.port = 0

    def bind(self, host: str, port: int) -> int:
        try:
            bound = int(self._server.add_insecure_port(f"{host}:{port}"))
        except RuntimeError as exc:
            raise PortInUse(f"cannot bind OTLP/gRPC to {host}:{port}: {exc}") from None
        if bound == 0:
            raise PortInUse(f"cannot bind OTLP/gRPC to {host}:{port}: address in use")
        self.port = bound
        return bound

    def start(self) -> None:
        self._deadlines = Deadlines("grpc-deadlines")
        self._server.start()
        for name in ("", SERVICE):
            self._health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace_s: float) -> None:
        self._health.enter_graceful_shutdown()
        self._server.stop(grace_s).wait()
        if self._deadlines is not None:
            self._deadlines.close()

    def _export(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
        wire = Wire(proto.PROTOBUF)  # gRPC's one encoding; grpcio has already inflated gzip
        try:
            # The key before the message: a bad key is refused without waiting for it.
            principal = self._ingest.authenticate(metadata(context.invocation_metadata()))
            body = self._receive(principal.owner, requests, context)
            with self._ingest.admit(principal, len(body)) as admitted:  # UNAVAILABLE past it
                export = self._ingest.export(principal, body, wire, TRANSPORT, admitted)
                del body  # the export holds it until a decoder has it
                outcome = run_blocking(export)
        except IngestError as error:
            outcome = self._ingest.refuse(TRANSPORT, error, wire.codec)
        except grpc.RpcError:  # the client went away before its message came
            self._ingest.refuse(TRANSPORT, ClientGone("call cancelled"), wire.codec)
            return None
        except Exception:  # before the export (it answers its own): keep the door open
            log.exception("gRPC export failed")
            outcome = self._ingest.refuse(TRANSPORT, Internal(), wire.codec)
        return _answer(context, outcome)

    def _receive(
        self, owner: str, requests: Iterator[bytes], context: grpc.ServicerContext
    ) -> bytes:
        """The call's one message, or ReceiveTimeout once `body_timeout_s` has
        passed without it (the call is ended at that moment, from the
        deadline thread, which wakes this one). Overloaded if the owner's
        calls already waiting for theirs hold half the slots."""
        if not self._waiting.enter(owner):
            raise Overloaded(
                f"collector busy: {self._waiting.limit} of this key's gRPC exports are "
                "waiting for their message; retry later"
            )
        try:
            return self._wait_for_message(requests, context)
        finally:
            self._waiting.leave(owner)

    def _wait_for_message(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
        assert self._deadlines is not None, "start() first"
        timeout = self._limits.body_timeout_s
        late = ReceiveTimeout(f"no request message within {timeout:g} s")
        deadline = self._deadlines.arm(timeout, lambda: end_call(context, late))
        try:
            body = next(requests)
        except StopIteration:  # also what an ended call's reader may see
            if not self._deadlines.disarm(deadline):
                raise late from None
            raise BadRequest("Export requires exactly one request message") from None
        except grpc.RpcError:
            if not self._deadlines.disarm(deadline):
                raise late from None
            raise
        if not self._deadlines.disarm(deadline):
            raise late
        return bytes(body)


def _answer(context: grpc.ServicerContext, outcome: Outcome) -> Any:
    """The response message, or the call ended with the outcome's error
    (through the one error table; UNAVAILABLE carries RetryInfo)."""
    if outcome.error is not None:
        abort(context, outcome.error)
    return proto.export_response_message(outcome.rejected, outcome.message)


def _server_options(limits: DoorLimits) -> list[tuple[str, int]]:
    """grpc-core's own limits on connections (docs/operations.md "Settings")."""
    return [
        ("grpc.max_receive_message_length", limits.max_body_bytes),
        ("grpc.so_reuseport", 0),
        # Past it a new connection is closed at once; the client sees UNAVAILABLE.
        ("grpc.max_allowed_incoming_connections", limits.max_connections),
        # A connection that never sends the HTTP/2 preface and settings is
        # sent GOAWAY and closed after this.
        ("grpc.server_handshake_timeout_ms", int(limits.header_timeout_s * 1000)),
        # A connection with no call for this long is sent GOAWAY; exporters
        # reconnect on their next export.
        ("grpc.max_connection_idle_ms", int(limits.idle_timeout_s * 1000)),
        # Not grpc.max_concurrent_streams: set (even to 100), grpc-core 1.85
        # refused streams of 4 senders with REFUSED_STREAM under load
        # (bench/ingest.py); the gate's slots bound Export calls instead.
    ]
