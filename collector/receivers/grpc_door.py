"""OTLP/gRPC on :4317: TraceService/Export plus the standard health service.

Export is registered with a pass-through request deserializer, so a
malformed message reaches `proto` and is refused with INVALID_ARGUMENT
instead of failing inside grpcio as INTERNAL (docs/otlp.md "Answers").
"""

from __future__ import annotations

import logging
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

import proto.responses
from collector.errors import IngestError, Overloaded, answer_for
from collector.ingest.path import Ingest
from collector.metrics import Metrics

log = logging.getLogger(__name__)
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
TRANSPORT = "grpc"
_THREADS = 32


class PortInUse(OSError):
    """The gRPC port could not be bound."""


class GrpcDoor:
    def __init__(self, ingest: Ingest, metrics: Metrics, max_body_bytes: int) -> None:
        self._ingest = ingest
        self._metrics = metrics
        self._server = grpc.server(
            # A call's message is read only once a thread takes it, so threads
            # bound what gRPC holds before admission (threads x body limit);
            # enough of them that a flood's calls reach admission and are
            # refused at once instead of queueing unanswered behind 8.
            futures.ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="grpc"),
            options=[
                ("grpc.max_receive_message_length", max_body_bytes),
                ("grpc.so_reuseport", 0),
            ],
        )
        handler = grpc.unary_unary_rpc_method_handler(
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
        self._server.start()
        for name in ("", SERVICE):
            self._health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace_s: float) -> None:
        self._health.enter_graceful_shutdown()
        self._server.stop(grace_s).wait()

    def _export(self, body: bytes, context: grpc.ServicerContext) -> Any:
        try:
            metadata = {
                k.lower(): v for k, v in context.invocation_metadata() if isinstance(v, str)
            }
            principal = self._ingest.authenticate(metadata)
            with self._ingest.admit(len(body)) as admitted:  # UNAVAILABLE at once past it
                decoded = self._ingest.decode(principal, body, "protobuf", gzip=False).result()
                accepted = self._ingest.accept(decoded, TRANSPORT, admitted)
                accepted.committed.result()
        except IngestError as error:
            self._metrics.export_requests.labels(TRANSPORT, error.kind).inc()
            _abort(context, error)
        except Exception as exc:  # keep the door open; report, never hide
            log.exception("gRPC export failed")
            self._metrics.export_requests.labels(TRANSPORT, "internal").inc()
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {exc}")
        self._metrics.export_requests.labels(TRANSPORT, "ok").inc()
        return proto.responses.export_response_message(accepted.rejected, accepted.error_message)


def _abort(context: grpc.ServicerContext, error: IngestError) -> None:
    answer = answer_for(error)
    if isinstance(error, Overloaded):
        # OTLP: UNAVAILABLE carries google.rpc.RetryInfo so the client backs off.
        retry = error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(seconds=error.retry_after_s)
        )
        status = status_pb2.Status(code=answer.grpc_code.value[0], message=error.message)
        status.details.add().Pack(retry)
        context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
    context.abort(answer.grpc_code, error.message)
