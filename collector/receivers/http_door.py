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

import asyncio
import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

import proto.responses
from collector.errors import (
    INTERNAL,
    IngestError,
    MethodNotAllowed,
    Overloaded,
    PayloadTooLarge,
    UnsupportedMedia,
    answer_for,
)
from collector.ingest.admission import Reservation
from collector.ingest.path import Ingest
from collector.metrics import Metrics

log = logging.getLogger(__name__)
TRANSPORT = "http"
PROTOBUF, JSON = "application/x-protobuf", "application/json"
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
        as_json = False
        try:
            if request.method != "POST":
                raise MethodNotAllowed(f"method {request.method} not allowed; use POST")
            headers = {k.lower(): v for k, v in request.headers.items()}
            principal = await run_in_threadpool(self._ingest.authenticate, headers, basic=basic)
            content = _content(headers.get("content-type", ""))
            as_json = content == "json"
            gzip = _gzip(headers.get("content-encoding", ""))
            self._declared_size(headers)  # 413 at once for what cannot fit
            with self._ingest.admit(principal, 0) as admitted:  # grows as bytes arrive
                body = await self._read_body(request, admitted)
                decoded = await asyncio.wrap_future(
                    self._ingest.decode(principal, body, content, gzip=gzip)
                )
                del body  # the decoder has it; hold the rows only
                accepted = self._ingest.accept(decoded, TRANSPORT, admitted)
                await asyncio.wrap_future(accepted.committed)
        except IngestError as error:
            self._metrics.export_requests.labels(TRANSPORT, error.kind).inc()
            return _error_response(error, as_json)
        except ClientDisconnect:  # gone, or timed out by the protocol (which answered 408)
            self._metrics.export_requests.labels(TRANSPORT, "disconnected").inc()
            return Response(b"", 499)  # never sent: the connection is closed
        except Exception:
            log.exception("HTTP export failed")
            self._metrics.export_requests.labels(TRANSPORT, "internal").inc()
            # The exception's text stays in the log: a driver's message names hosts and ports.
            body = proto.responses.status_body(13, INTERNAL, as_json=as_json)
            return Response(body, 500, media_type=JSON if as_json else PROTOBUF)
        self._metrics.export_requests.labels(TRANSPORT, "ok").inc()
        payload = proto.responses.export_response(
            accepted.rejected, accepted.error_message, as_json=as_json
        )
        return Response(payload, 200, media_type=JSON if as_json else PROTOBUF)

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


def _content(content_type: str) -> str:
    media = content_type.split(";", 1)[0].strip().lower()
    if media == PROTOBUF:
        return "protobuf"
    if media == JSON:
        return "json"
    raise UnsupportedMedia(f"unsupported content type {content_type!r}; use {PROTOBUF} or {JSON}")


def _gzip(encoding: str) -> bool:
    value = encoding.strip().lower()
    if value in ("", "identity"):
        return False
    if value == "gzip":
        return True
    raise UnsupportedMedia(f"unsupported content encoding {encoding!r}; use gzip or identity")


def _error_response(error: IngestError, as_json: bool) -> Response:
    answer = answer_for(error)
    if isinstance(error, MethodNotAllowed | UnsupportedMedia):
        as_json = True  # the request's encoding is unusable here (docs/otlp.md "Answers")
    code = answer.grpc_code.value[0]
    body = proto.responses.status_body(code, error.message, as_json=as_json)
    headers: dict[str, str] = {}
    if isinstance(error, Overloaded):
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, MethodNotAllowed):
        headers["Allow"] = "POST"
    return Response(
        body, answer.http_status, headers=headers, media_type=JSON if as_json else PROTOBUF
    )
