"""The one place a problem of the read layer (api.problems) becomes an HTTP answer.

`PROBLEM_STATUS` is each problem's status; `problem_answered` answers it as
JSON under /api/ and /.well-known/ (`{"detail": ...}`, as every API error) and as the
dashboard's error page anywhere else, with the same status and sentence.
`StoreFaults` answers the same way for a store that fails under a route
(its database down, its disk full).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.dashboard.pages import error_page
from api.problems import (
    Conflict,
    Invalid,
    KeyRequired,
    NotFound,
    NotYours,
    Problem,
    QuotaExceeded,
    TooLarge,
    Unavailable,
)

# docs/api.md "Errors". 429, not 507, for a grader's own backlog: it clears by
# itself as runs arrive or waiting grades age out, and a 5xx would alarm
# whoever watches the server's health.
PROBLEM_STATUS: Final[dict[type[Problem], int]] = {
    NotFound: 404,
    Invalid: 422,
    KeyRequired: 401,
    NotYours: 403,
    Conflict: 409,
    QuotaExceeded: 429,
    TooLarge: 413,
    Unavailable: 503,
}


def problem_status(problem: Problem) -> tuple[int, dict[str, str]]:
    """The status a problem answers with, and the headers that go with it."""
    status = next(code for kind, code in PROBLEM_STATUS.items() if isinstance(problem, kind))
    headers: dict[str, str] = {}
    if isinstance(problem, KeyRequired):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(problem, QuotaExceeded | Unavailable):
        headers["Retry-After"] = str(max(1, math.ceil(problem.retry_after_s)))
    return status, headers


async def problem_answered(request: Request, exc: Exception) -> Response:
    """JSON for the API's routes, the dashboard's error page for its pages."""
    assert isinstance(exc, Problem)
    status, headers = problem_status(exc)
    if request.url.path.startswith(("/api/", "/.well-known/")):
        return JSONResponse({"detail": exc.detail}, status, headers=headers or None)
    return error_page(status, exc.detail, headers)


StoreFault = Callable[[BaseException], Problem | None]


class StoreFaults:
    """An exception a route lets through that `fault` recognises as its
    store's (the collector knows its drivers; the API does not) is answered
    as the problem `fault` makes of it: a JSON problem or the error page
    with its status and Retry-After, never the server's text/plain 500 with
    a traceback logged per request and the driver's message, host and port
    in reach of the body (issue 37: 2,635 tracebacks in a 75 s outage).
    Anything else, or a failure once the answer has begun, propagates.

    Plain ASGI, like api.app.RefuseNul: the OTLP/HTTP door shares this app.
    """

    def __init__(self, app: ASGIApp, fault: StoreFault) -> None:
        self.app = app
        self._fault = fault

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            problem = None if started else self._fault(exc)
            if problem is None:
                raise
            answer = await problem_answered(Request(scope), problem)
            await answer(scope, receive, send)
