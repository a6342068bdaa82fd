"""Dispatch to an HTTP endpoint (SCREEN.md section 3): one POST per task and round.

The request carries the root span's W3C trace context (`traceparent`) and
the run's identity (`baggage`), so an agent instrumented with OpenTelemetry
continues the screener's trace and its own spans join the run. The answer
is read as a stream and dropped past 1 MiB: an endpoint that answers with
gigabytes costs the screener one mebibyte. httpx's exceptions are mapped
to error classes here, at the edge; nothing an endpoint does raises past
`dispatch`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from urllib.parse import quote, urlsplit

import httpx
from opentelemetry.trace import Span

from collector.screening.answers import MAX_BODY_BYTES, Answer, failed, read_http_answer
from collector.screening.plan import Dispatch

# Headers the screener owns; a --header may not replace them (they carry the join).
RESERVED_HEADERS = frozenset(
    {"content-type", "content-length", "host", "traceparent", "tracestate", "baggage"}
    | {"x-badge-run", "user-agent"}
)


def public_url(url: str) -> str:
    """`url.full` as recorded: without userinfo (a password) and query (often a token)."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="").geturl()


def baggage_value(value: str) -> str:
    """W3C Baggage percent-encoding: everything but unreserved characters (space is %20)."""
    return quote(value, safe="")


class HttpTarget:
    """An agent behind `POST URL`; one connection pool sized to the concurrency."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        user_agent: str,
        screening_id: str,
        concurrency: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        self.shown_url = public_url(url)
        self._headers = {
            "Content-Type": "application/json",
            "User-Agent": user_agent,
            "X-Badge-Run": "true",
            **headers,
        }
        self._baggage = f"badge.screening.id={baggage_value(screening_id)}"
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self._client = httpx.AsyncClient(limits=limits, transport=transport)
        # For the one retry of a stale kept-alive connection: never a kept one.
        self._fresh = httpx.AsyncClient(
            limits=httpx.Limits(max_keepalive_connections=0), transport=transport
        )

    async def close(self) -> None:
        await self._client.aclose()
        await self._fresh.aclose()

    async def dispatch(self, dispatch: Dispatch, root: Span) -> Answer:
        """POST the task; the answer's error class by the table's order, never an exception."""
        context = root.get_span_context()
        headers = {
            **self._headers,
            "traceparent": f"00-{context.trace_id:032x}-{context.span_id:016x}-01",
            "baggage": f"{self._baggage},badge.task.id={baggage_value(dispatch.task.id)},"
            f"badge.run.id={baggage_value(dispatch.run_key)}",
        }
        limit = dispatch.task.timeout_s
        body = dispatch.body.encode()
        try:
            # One deadline from connect to last byte; httpx's own timeouts only back it up.
            async with asyncio.timeout(limit):
                try:
                    return await self._exchange(self._client, body, headers, limit)
                except StaleConnection:
                    return await self._exchange(self._fresh, body, headers, limit)
        except (TimeoutError, httpx.TimeoutException):
            return failed("timeout", f"no complete answer within {limit:g} s")
        except httpx.HTTPError as exc:
            return failed("connection_error", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a bad answer never crashes the screener
            return failed("connection_error", f"{type(exc).__name__}: {exc}")

    async def _exchange(
        self, client: httpx.AsyncClient, body: bytes, headers: dict[str, str], limit: float
    ) -> Answer:
        """One POST; StaleConnection when a kept-alive connection broke before any byte
        of the answer (issue 37 item 13): the agent closed it after its last answer,
        without `Connection: close`, and the close crossed this request. That is not the
        agent's failure; the same failure on a new connection is."""
        seen = _Connection()
        stream = client.stream(
            "POST",
            self.url,
            content=body,
            headers=headers,
            timeout=httpx.Timeout(limit),
            extensions={"trace": seen.trace},
        )
        try:
            async with stream as response:
                return await _read(response)
        except httpx.TransportError as exc:
            if (
                seen.reused
                and seen.broke_before_answer
                and not isinstance(exc, httpx.TimeoutException)
            ):
                raise StaleConnection from exc
            raise


class StaleConnection(Exception):
    """A reused connection broke before the answer began: try once on a new one."""


class _Connection:
    """What httpcore's trace extension tells of one request's connection."""

    _BEFORE_ANSWER = frozenset(
        {
            "http11.send_request_headers.failed",
            "http11.send_request_body.failed",
            "http11.receive_response_headers.failed",
        }
    )

    def __init__(self) -> None:
        self.reused = True
        self.broke_before_answer = False

    async def trace(self, event: str, info: dict[str, object]) -> None:
        if event == "connection.connect_tcp.started":
            self.reused = False
        elif event in self._BEFORE_ANSWER:
            self.broke_before_answer = True


async def _read(response: httpx.Response) -> Answer:
    """The answer, streamed and cut at 1 MiB: what is past it is not looked at."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            chunks.append(chunk[: len(chunk) - (size - MAX_BODY_BYTES)])
            return read_http_answer(response.status_code, b"".join(chunks), too_big=True)
        chunks.append(chunk)
    return read_http_answer(response.status_code, b"".join(chunks), too_big=False)
