"""Response bodies in the request's encoding: success, partial success, Status."""

from __future__ import annotations

import json

from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse


def export_response(rejected: int, message: str, *, as_json: bool) -> bytes:
    """The encoded `export_response_message`, in the request's encoding."""
    response = export_response_message(rejected, message)
    if as_json:
        return json.dumps(json_format.MessageToDict(response)).encode()
    return bytes(response.SerializeToString())


def status_body(code: int, message: str, *, as_json: bool) -> bytes:
    """A `google.rpc.Status` with the gRPC code number and a readable message."""
    if as_json:
        return json.dumps({"code": code, "message": message, "details": []}).encode()
    return bytes(status_pb2.Status(code=code, message=message).SerializeToString())


def export_response_message(rejected: int, message: str) -> ExportTraceServiceResponse:
    """`ExportTraceServiceResponse`; partial_success only when spans were refused."""
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return response
