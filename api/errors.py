"""Every error of the read API is `{"detail": "<sentence>"}` (docs/api.md), as the
OpenAPI document says.

FastAPI's own validation errors carried `detail` as an array while ours
carried a string, and the schema promised the array for both; a 405 named
only the first route's method in `Allow`. Both are answered here instead.
The read layer's problems are answered in api.problem_answers.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match


class ErrorDetail(BaseModel):
    """The body of every read-API error."""

    detail: str = Field(description="what was wrong, in one sentence")


def error(description: str) -> dict[str, Any]:
    """An OpenAPI `responses` entry with the error body."""
    return {"model": ErrorDetail, "description": description}


# Declared on every operation (app-wide): any parameter can be malformed, any
# URL may hold a NUL (api.app.RefuseNul), and any route may find its database
# unavailable (api.problem_answers.StoreFaults).
COMMON_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: error("NUL character in the URL"),
    422: error("a parameter is malformed or out of range"),
    503: error("the database is unavailable now; retry after Retry-After seconds")
    | {"headers": {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}},
}


async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
    """`query.page_size: Input should be ...; ...` as one string."""
    assert isinstance(exc, RequestValidationError)
    parts = []
    for item in exc.errors():
        where = ".".join(str(part) for part in item.get("loc", ()))
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return JSONResponse({"detail": "; ".join(parts) or "invalid request"}, 422)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own (no such path, a method not taken; the read layer raises
    api.problems instead); a 405 lists every method any route takes at this path."""
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return JSONResponse({"detail": exc.detail}, exc.status_code, headers=headers or None)


_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def _allowed_methods(request: Request) -> list[str]:
    """Each method some route fully matches at this path (routers nest, so ask
    the routes rather than read their method sets), and HEAD wherever GET is
    (api.head answers it)."""
    routes = request.app.router.routes
    allowed = {
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes
        )
    }
    if "GET" in allowed:
        allowed.add("HEAD")
    return [method for method in _METHODS if method in allowed]
