"""Every ingest error, whether it is retryable, and ONE table to the wire codes.

    IngestError
     +-- MethodNotAllowed     405                    (HTTP only)
     +-- Unauthenticated      401 / UNAUTHENTICATED
     +-- UnsupportedMedia     415                    (content type or encoding)
     +-- PayloadTooLarge      413 / RESOURCE_EXHAUSTED   no RetryInfo: not retried
     +-- BadRequest           400 / INVALID_ARGUMENT
     +-- ReceiveTimeout       408 / DEADLINE_EXCEEDED (body or message not sent in time)
     +-- Overloaded           503 / UNAVAILABLE + RetryInfo (queue full, shutting down)
          +-- StoreUnavailable    the same: the database cannot be reached or written
          +-- DecoderLost         the same: the decoder process holding it died
     +-- ClientGone           never answered: the client went away first
     +-- Internal             500 / INTERNAL: a bug, logged; its text stays in the log

Rows cite OTLP 1.x "Failures" (otlpgrpc / otlphttp response sections).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

import grpc

# What a client reads of an unexpected error (500 / INTERNAL); the rest is
# logged. An exception's text may hold a driver's message with hosts and ports.
INTERNAL: Final = "internal error; the collector logged it"


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


# What a refusal during a database outage asks the client to wait, at every
# door and route: short, since a restarted database is usually back within
# seconds, and an exporter backs off further by itself.
STORE_RETRY_AFTER_S: Final = 2


class StoreUnavailable(Overloaded):
    """The database is down, unreachable or cannot be written (a full disk).

    Retryable: nothing of the request was stored, and a stock exporter
    retries a 503 / UNAVAILABLE where it drops a 500 / INTERNAL at once
    (issue 37). The message names no driver, host or port."""

    kind = "store_unavailable"

    def __init__(self) -> None:
        super().__init__("the database is unavailable; retry later", STORE_RETRY_AFTER_S)


class DecoderLost(Overloaded):
    """The decoder process holding the request died (killed, out of memory);
    a new one is started, and the same request decodes there."""

    kind = "decoder_lost"

    def __init__(self) -> None:
        super().__init__("a decoder process stopped while decoding this export; retry", 1)


class ClientGone(IngestError):
    """The client closed the connection or cancelled the call before its
    request was in: there is no one to answer (counted, not sent)."""

    kind = "disconnected"


class Internal(IngestError):
    """Anything unexpected: logged where it happened; the client reads only
    `INTERNAL` (a driver's message can name hosts and ports)."""

    kind = "internal"

    def __init__(self) -> None:
        super().__init__(INTERNAL)


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
    StoreUnavailable: WireAnswer(503, grpc.StatusCode.UNAVAILABLE, True),
    DecoderLost: WireAnswer(503, grpc.StatusCode.UNAVAILABLE, True),
    Internal: WireAnswer(500, grpc.StatusCode.INTERNAL, False),
}


def answer_for(error: IngestError) -> WireAnswer:
    """The row of the error's class, or of the nearest class above it that has one."""
    for kind in type(error).__mro__:
        if kind in ERROR_TABLE:
            return ERROR_TABLE[kind]
    return WireAnswer(500, grpc.StatusCode.INTERNAL, False)
