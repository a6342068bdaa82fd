"""The two OTLP encodings, each one object chosen once per request.

A door picks the `Codec` from the request's media type (or, for gRPC, takes
`PROTOBUF`); from then on the request is parsed and answered through it, so
no "is it JSON?" flag travels down the path. The OpenTelemetry Collector's
otlpreceiver does the same with its encoder per content type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from proto.errors import DecodeError
from proto.otlp_json import json_to_request


@dataclass(frozen=True, slots=True)
class Codec:
    """How one encoding reads a request and writes its answers."""

    name: str  # "protobuf" or "json": what crosses to a decoder process
    media_type: str
    parse: Callable[[bytes], Any]  # bytes -> ExportTraceServiceRequest, or DecodeError
    encode: Callable[[Any], bytes]  # a response message -> bytes

    def export_response(self, rejected: int, message: str) -> bytes:
        """Success, with partial_success when spans were refused."""
        return self.encode(export_response_message(rejected, message))

    def status(self, code: int, message: str) -> bytes:
        """A `google.rpc.Status` with the gRPC code number and a readable message."""
        return self.encode(status_pb2.Status(code=code, message=message))


def export_response_message(rejected: int, message: str) -> ExportTraceServiceResponse:
    """`ExportTraceServiceResponse`; partial_success only when spans were refused."""
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return response


def _parse_protobuf(body: bytes) -> Any:
    try:
        return ExportTraceServiceRequest.FromString(body)
    except ProtobufDecodeError as exc:
        raise DecodeError(f"malformed protobuf ExportTraceServiceRequest: {exc}") from None


def _encode_protobuf(message: Any) -> bytes:
    return bytes(message.SerializeToString())


def _encode_json(message: Any) -> bytes:
    # OTLP/JSON: a Status's details are a list even when empty.
    answer = json_format.MessageToDict(message)
    if isinstance(message, status_pb2.Status):
        answer = {"code": message.code, "message": message.message, "details": []}
    return json.dumps(answer).encode()


PROTOBUF = Codec("protobuf", "application/x-protobuf", _parse_protobuf, _encode_protobuf)
JSON = Codec("json", "application/json", json_to_request, _encode_json)
CODECS = {codec.name: codec for codec in (PROTOBUF, JSON)}


def codec_for(content_type: str) -> Codec | None:
    """The codec of a Content-Type (parameters such as charset ignored), or None."""
    media = content_type.split(";", 1)[0].strip().lower()
    for codec in (PROTOBUF, JSON):
        if media == codec.media_type:
            return codec
    return None
