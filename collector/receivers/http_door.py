"""OTLP/HTTP `POST /v1/traces` on :4318, as a Starlette route; the same door
at `POST /api/public/otel/v1/traces`, where the Langfuse SDK exports, also
takes the key as the password of `authorization: Basic` (api.auth).

Checks run in docs/otlp.md's order, first failure answers: method (405), key
(401), content type (415), content encoding (415), size (413), decode (400).
The key is checked on the headers, before any budget is reserved; the
in-flight budget then grows with the bytes as they arrive, never with the
declared Content-Length (issue 29: two uploads that declared 16 MiB and
sent one byte held all of it). After a refusal the rest of the body is
read and dropped, as HTTP/1.1 keep-alive needs (closing with it unread
would reset the connection before the client reads the answer); the
protocol (http_protocol) times out a body that does not come.
"""

from __future__ import annotations

import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

import proto
from collector.errors import (
    ClientGone,
    IngestError,
    Internal,
    MethodNotAllowed,
    Overloaded,
    PayloadTooLarge,
    UnsupportedMedia,
    answer_for,
)
from collector.ingest.admission import Reservation
from collector.ingest.export import Outcome, Wire, run_async
from collector.ingest.path import Ingest
from collector.metrics import Metrics

log = logging.getLogger(__name__)
TRANSPORT = "http"
# Where the Langfuse SDK's exporter sends: base_url + this path.
LANGFUSE_PATH = "/api/public/otel/v1/traces"


class HttpDoor:
    def __init__(self, ingest: Ingest, metrics: Metrics, max_body_bytes: int) -> None:
        self._ingest = ingest
        self._metrics = metrics
        self._max = max_body_bytes

    def routes(self) -> list[Route]:
        """`/v1/traces`, and the same door where the Langfuse SDK exports
        (docs/otlp.md "From the Langfuse SDK"), which takes its Basic header."""
        methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
        return [
            Route("/v1/traces", self.handle, methods=methods),
            Route(LANGFUSE_PATH, self.handle_langfuse, methods=methods),
        ]

    async def handle_langfuse(self, request: Request) -> Response:
        return await self.handle(request, basic=True)

    async def handle(self, request: Request, *, basic: bool = False) -> Response:
        codec = proto.PROTOBUF  # until the request says otherwise
        try:
            if request.method != "POST":
                raise MethodNotAllowed(f"method {request.method} not allowed; use POST")
            headers = {k.lower(): v for k, v in request.headers.items()}
            principal = await run_in_threadpool(self._ingest.authenticate, headers, basic=basic)
            wire = Wire(_codec(headers.get("content-type", "")), _gzip(headers))
            codec = wire.codec
            self._declared_size(headers)  # 413 at once for what cannot fit
            with self._ingest.admit(principal, 0) as admitted:  # grows as bytes arrive
                outcome = await run_async(
                    self._ingest.export(
                        principal,
                        await self._read_body(request, admitted),
                        wire,
                        TRANSPORT,
                        admitted,
                    )
                )
        except IngestError as error:
            outcome = self._ingest.refuse(TRANSPORT, error, codec)
        except ClientDisconnect:  # gone, or timed out by the protocol (which answered 408)
            self._ingest.refuse(TRANSPORT, ClientGone("client disconnected"), codec)
            return Response(b"", 499)  # never sent: the connection is closed
        except Exception:  # before the export (it answers its own): keep the door open
            log.exception("HTTP export failed")
            outcome = self._ingest.refuse(TRANSPORT, Internal(), codec)
        return _response(outcome)

    def _declared_size(self, headers: dict[str, str]) -> int:
        """The Content-Length, if any (0 if absent); 413 past the body limit."""
        declared = headers.get("content-length", "")
        if not declared.isdigit():
            return 0
        if len(declared) > 20 or int(declared) > self._max:
            raise PayloadTooLarge(f"body of {declared} bytes exceeds {self._max}")
        return int(declared)

    async def _read_body(self, request: Request, admitted: Reservation) -> bytes:
        """The body, holding room for it as it arrives: a stalled upload holds
        what it sent, not what it declared (503 as soon as the budget cannot
        hold the next chunk, or this owner's bodies still arriving would hold
        more than half of it: collector.ingest.admission)."""
        chunks = bytearray()
        async for chunk in request.stream():
            chunks += chunk
            if len(chunks) > self._max:
                raise PayloadTooLarge(f"body exceeds {self._max} bytes")
            admitted.grow_to(len(chunks), arriving=True)
        admitted.arrived()
        return bytes(chunks)


def _codec(content_type: str) -> proto.Codec:
    codec = proto.codec_for(content_type)
    if codec is None:
        raise UnsupportedMedia(
            f"unsupported content type {content_type!r}; "
            f"use {proto.PROTOBUF.media_type} or {proto.JSON.media_type}"
        )
    return codec


def _gzip(headers: dict[str, str]) -> bool:
    encoding = headers.get("content-encoding", "")
    value = encoding.strip().lower()
    if value in ("", "identity"):
        return False
    if value == "gzip":
        return True
    raise UnsupportedMedia(f"unsupported content encoding {encoding!r}; use gzip or identity")


def _response(outcome: Outcome) -> Response:
    """The HTTP answer to an outcome, in its codec; a refusal through the
    one error table (collector.errors)."""
    codec, error = outcome.codec, outcome.error
    if error is None:
        body = codec.export_response(outcome.rejected, outcome.message)
        return Response(body, 200, media_type=codec.media_type)
    answer = answer_for(error)
    if isinstance(error, MethodNotAllowed | UnsupportedMedia):
        codec = proto.JSON  # the request's encoding is unusable here (docs/otlp.md "Answers")
    headers: dict[str, str] = {}
    if isinstance(error, Overloaded):
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, MethodNotAllowed):
        headers["Allow"] = "POST"
    body = codec.status(answer.grpc_code.value[0], error.message)
    return Response(body, answer.http_status, headers=headers, media_type=codec.media_type)
