"""Every API route that reads a JSON body checks the key first and reads at
most a bound (issue 37 item 9).

FastAPI reads and parses a route's whole body before it solves any
dependency, the caller's key among them: a keyless `POST /grades` of 400 MB
took the server from 753 to 2,291 MB and answered 422, not 401. A route of
this class does the key check itself, on the headers, before a byte of the
body is read, then reads the body up to its bound (413 past it, at once when
Content-Length says so) and hands FastAPI the bytes it holds. The key check
here is only "a valid key": each view still decides what that key may do
(a grader key for grades, the owner's for the rest), as before. Every write
the API offers needs a key whatever the mode (api.auth.Caller), so none is
answered here that would have been answered without one.

The bound of a route is its `openapi_extra["x-max-body-bytes"]` (`bound()`),
so the OpenAPI document tells a client too; MAX_BODY_BYTES otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

from api.auth import KeyChecker, key_from_headers
from api.problems import KeyRequired, TooLarge

BOUND_EXTRA: Final = "x-max-body-bytes"
MAX_BODY_BYTES: Final = 1 << 20  # a weights body is a few dozen bytes
Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def bound(max_bytes: int) -> dict[str, Any]:
    """The `openapi_extra` of a route whose bodies may hold `max_bytes`."""
    return {BOUND_EXTRA: max_bytes}


class KeyFirstRoute(APIRoute):
    """An APIRoute whose body, if it takes one, is read only for a valid key."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler
        limit = int((self.openapi_extra or {}).get(BOUND_EXTRA, MAX_BODY_BYTES))

        async def key_first(request: Request) -> Response:
            await require_key(request)
            body = await read_bounded(request, limit)
            return await handler(Request(request.scope, _replay(body)))

        return key_first


async def require_key(request: Request) -> None:
    """KeyRequired (401) unless the request carries a valid key; Basic is not one here."""
    headers = {"authorization": request.headers.get("authorization", "")}
    headers["x-api-key"] = request.headers.get("x-api-key", "")
    key = key_from_headers(headers)
    if key is None:
        raise KeyRequired("a key is required (authorization: Bearer KEY)")
    keys: KeyChecker = request.app.state.keys
    if await run_in_threadpool(keys.authenticate, key) is None:
        raise KeyRequired("unknown or revoked key")


async def read_bounded(request: Request, limit: int) -> bytes:
    """The body, at most `limit` bytes; TooLarge (413) past it. What is left
    unread is dropped by the server as it arrives (the connection stays usable)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and (len(declared) > 20 or int(declared) > limit):
        raise TooLarge(f"body of {declared} bytes exceeds {limit}")
    chunks = bytearray()
    async for chunk in request.stream():
        chunks += chunk
        if len(chunks) > limit:
            raise TooLarge(f"body exceeds {limit} bytes")
    return bytes(chunks)


def _replay(body: bytes) -> Callable[[], Coroutine[Any, Any, Message]]:
    """A receive() that gives the body read already, once."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
