"""`HEAD` answers wherever `GET` does: same status and headers, no body (RFC 9110
section 9.3.2).

FastAPI routes declared with `@get` take GET only, so uptime checks that use
HEAD got 405 on `/healthz` and `/` (issue 29). Declaring HEAD on every route
would double the OpenAPI document; instead a HEAD request is served as a GET
and its body dropped here, for the API, the dashboard and the static files
alike. Where GET itself is refused (the OTLP door takes POST only), HEAD
gets the same refusal.

Plain ASGI, like api.app.RefuseNul: the OTLP/HTTP door shares this app.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                # Content-Length stays the GET's, as the RFC allows; the server
                # (uvicorn) writes no body for HEAD either.
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
