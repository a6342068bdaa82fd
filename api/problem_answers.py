"""The one place a problem of the read layer (api.problems) becomes an HTTP answer.

`PROBLEM_STATUS` is each problem's status; `problem_answered` answers it as
JSON under /api/ and /.well-known/ (`{"detail": ...}`, as every API error) and as the
dashboard's error page anywhere else, with the same status and sentence.
"""

from __future__ import annotations

import math
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

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
