"""Ending a gRPC call with an `IngestError`'s code (collector.errors' table).

Two ways: `abort` from the call's own handler thread, and `end_call` from
any other thread (a deadline), which grpcio's public API cannot do with a
status of our choosing: `ServicerContext.cancel()` always says CANCELLED.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2

from collector.errors import IngestError, Overloaded, answer_for


def abort(context: grpc.ServicerContext, error: IngestError) -> None:
    """Raise out of the handler with the error's code and message."""
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


def end_call(context: grpc.ServicerContext, error: IngestError) -> None:
    """End the call now, from any thread: the client gets the error's code
    and message, and a handler blocked reading the call's message wakes up
    with an RpcError.

    grpcio 1.85's `_Context` keeps the core call as `_rpc_event.call`, whose
    `cancel(code, details)` sends that status; if a later grpcio moves it,
    the call is still ended, as CANCELLED (tests/integration/
    test_grpc_door_outages.py checks the code the client sees).
    """
    call: Any = getattr(getattr(context, "_rpc_event", None), "call", None)
    code = answer_for(error).grpc_code.value[0]
    try:
        call.cancel(code, error.message)
    except (AttributeError, TypeError, ValueError):
        context.cancel()
