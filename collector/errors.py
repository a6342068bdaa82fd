"""Every ingest error, whether it is retryable, and ONE table to the wire codes.

    IngestError
     +-- MethodNotAllowed     405                    (HTTP only)
     +-- Unauthenticated      401 / UNAUTHENTICATED
     +-- UnsupportedMedia     415                    (content type or encoding)
     +-- PayloadTooLarge      413 / RESOURCE_EXHAUSTED   no RetryInfo: not retried
     +-- BadRequest           400 / INVALID_ARGUMENT
     +-- ReceiveTimeout       408 / DEADLINE_EXCEEDED (body or message not sent in time)
     +-- Overloaded           503 / UNAVAILABLE + RetryInfo (queue full, db down,
                                                         shutting down)

Rows cite OTLP 1.x "Failures" (otlpgrpc / otlphttp response sections).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import grpc


class IngestError(Exception):
    """Raised inside the ingest path; receivers turn it into a wire answer."""

    kind: ClassVar[str] = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MethodNotAllowed(IngestError):
    kind = "method"


class Unauthenticated(IngestError):
    kind = "unauthenticated"


class UnsupportedMedia(IngestError):
    kind = "media"


class PayloadTooLarge(IngestError):
    kind = "too_large"


class BadRequest(IngestError):
    kind = "bad_request"


class ReceiveTimeout(IngestError):
    """The client did not send its body (HTTP) or message (gRPC) in time.

    Retryable over gRPC (OTLP lists DEADLINE_EXCEEDED among the retryable
    codes); an HTTP exporter treats 408 as final, and a client this slow has
    passed an SDK exporter's own 10 s timeout long before."""

    kind = "timeout"


class Overloaded(IngestError):
    kind = "overloaded"

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class WireAnswer:
    http_status: int
    grpc_code: grpc.StatusCode
    retryable: bool


# OTLP spec: "Failures" - retryable only for overload (UNAVAILABLE / 503 with
# Retry-After); 400/401/413/415 are permanent and the exporter drops the data.
ERROR_TABLE: dict[type[IngestError], WireAnswer] = {
    MethodNotAllowed: WireAnswer(405, grpc.StatusCode.UNIMPLEMENTED, False),
    Unauthenticated: WireAnswer(401, grpc.StatusCode.UNAUTHENTICATED, False),
    UnsupportedMedia: WireAnswer(415, grpc.StatusCode.INVALID_ARGUMENT, False),
    PayloadTooLarge: WireAnswer(413, grpc.StatusCode.RESOURCE_EXHAUSTED, False),
    BadRequest: WireAnswer(400, grpc.StatusCode.INVALID_ARGUMENT, False),
    ReceiveTimeout: WireAnswer(408, grpc.StatusCode.DEADLINE_EXCEEDED, True),
    Overloaded: WireAnswer(503, grpc.StatusCode.UNAVAILABLE, True),
}


def answer_for(error: IngestError) -> WireAnswer:
    return ERROR_TABLE.get(type(error), WireAnswer(500, grpc.StatusCode.INTERNAL, False))
