"""Export calls judged on their metadata, before a handler thread is taken.

grpcio's synchronous server runs interceptors in its one polling thread as
each call arrives, with the call's metadata and before its message; what
they return runs on a handler thread. So this gate answers there:

- no key (and not --insecure): UNAUTHENTICATED, on a handler that never
  reads the message;
- `slots` Export calls already received or in progress: UNAVAILABLE with
  RetryInfo at once, as any overload (docs/otlp.md "Limits"), instead of
  queueing unanswered for a thread;
- otherwise the Export handler, holding one slot until it returns.

The handler thread pool has a few threads beyond the slots, so these quick
refusals and `grpc.health` checks always find one (issue 29: 33 streams
that never sent their message held all 32 threads and the health check
timed out). A key that is present is checked against the database by the
handler, before it reads the message: a lookup in this polling thread would
stall every call behind a slow database.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc

import proto
from collector.errors import IngestError, Overloaded, Unauthenticated
from collector.ingest.path import Ingest
from collector.metrics import Metrics
from collector.receivers.grpc_status import abort

TRANSPORT = "grpc"
Behaviour = Callable[[Iterator[bytes], grpc.ServicerContext], Any]


class ExportGate(grpc.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, ingest: Ingest, metrics: Metrics, method: str, slots: int) -> None:
        self._ingest = ingest
        self._metrics = metrics
        self._method = method
        self._slots = slots
        self._free = slots
        self._lock = threading.Lock()
        self._admitted: grpc.RpcMethodHandler | None = None
        self._unauthenticated = _refusal(
            Unauthenticated("missing ingest key: send 'authorization: Bearer KEY'"), ingest
        )
        self._busy = _refusal(
            Overloaded(f"collector busy: {slots} gRPC exports in progress; retry later"), ingest
        )

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        if details.method != self._method:
            return continuation(details)  # health, and UNIMPLEMENTED for unknown methods
        if self._ingest.lacks_key(metadata(details.invocation_metadata)):
            return self._unauthenticated
        if not self._take():
            return self._busy
        if self._admitted is None:  # the Export handler, wrapped to give its slot back
            handler = continuation(details)
            if handler is None:  # pragma: no cover - Export is always registered
                self._give()
                return None
            self._admitted = _holding_a_slot(handler, self._give)
        return self._admitted

    def _take(self) -> bool:
        with self._lock:
            if self._free <= 0:
                return False
            self._free -= 1
            self._metrics.grpc_exports_in_progress.set(self._slots - self._free)
            return True

    def _give(self) -> None:
        with self._lock:
            self._free += 1
            self._metrics.grpc_exports_in_progress.set(self._slots - self._free)


class WaitingShare:
    """Calls of one owner that wait for their message hold at most `limit`
    slots: a key that opens streams and never sends keeps the others' half
    free (its calls are ended after `body_timeout_s`, but it may open more).
    A sending exporter's message arrives within milliseconds, so the share
    costs it nothing, however many exports its owner has in progress."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._waiting: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, owner: str) -> bool:
        with self._lock:
            held = self._waiting.get(owner, 0)
            if held >= self.limit:
                return False
            self._waiting[owner] = held + 1
            return True

    def leave(self, owner: str) -> None:
        with self._lock:
            left = self._waiting[owner] - 1
            if left:
                self._waiting[owner] = left
            else:
                del self._waiting[owner]


def _holding_a_slot(handler: grpc.RpcMethodHandler, give: Callable[[], None]) -> Any:
    """`handler`, giving its slot back when it returns (built once, not per call)."""
    behaviour: Behaviour = handler.stream_unary

    def export(requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
        try:
            return behaviour(requests, context)
        finally:
            give()

    return grpc.stream_unary_rpc_method_handler(
        export, response_serializer=handler.response_serializer
    )


def metadata(pairs: Any) -> dict[str, str]:
    """A call's metadata as lower-case text headers (binary `-bin` values dropped)."""
    return {key.lower(): value for key, value in pairs or () if isinstance(value, str)}


def _refusal(error: IngestError, ingest: Ingest) -> grpc.RpcMethodHandler:
    """A handler that answers `error` without reading the call's message
    (client-streaming on our side: grpcio reads a unary request before the
    handler runs; the wire is the same for the client)."""

    def refuse(requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
        ingest.refuse(TRANSPORT, error, proto.PROTOBUF)  # counted with every outcome
        abort(context, error)

    return grpc.stream_unary_rpc_method_handler(refuse)
