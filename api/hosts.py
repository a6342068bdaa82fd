"""The `Host` allow-list of the HTTP port: a defence against DNS rebinding.

A web page on evil.example can make its own name resolve to 127.0.0.1 and
then talk to a laptop's collector as if same-origin: the browser still sends
`Host: evil.example`. So every request of the port (read API, dashboard,
OTLP/HTTP) whose `Host` names anything but the bound address, `localhost`,
`127.0.0.1`, `[::1]` or a host of BADGE_ALLOWED_HOSTS is refused with 421,
before any route runs, whatever the mode (docs/api.md "Who may read what").
Ports are not compared: the bound one may be picked at start (port 0), and
the name is what a rebinding attack changes.

A request without `Host` (HTTP/1.0) passes: a browser always sends one, so
it cannot come from a rebinding page, and old health checkers omit it. A
request with two `Host` lines is a 400 (RFC 9112 section 3.2): which of
them names the target is anyone's guess, and a proxy in front may have
judged the other one.

Plain ASGI, like api.app.RefuseNul: the OTLP/HTTP door shares this app.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("localhost", "127.0.0.1", "::1")
MAX_SHOWN = 100  # characters of a refused Host echoed in the answer


def host_name(authority: str) -> str:
    """The name of `host[:port]`, `[v6][:port]` or a bare v6 address (as
    BADGE_HOST may be), lower-case, without a final dot."""
    text = authority.strip().lower()
    if text.startswith("["):
        name, _, rest = text[1:].partition("]")
        if rest and not (rest[0] == ":" and rest[1:].isdigit()):
            name = text  # junk after the address: a name nobody allows
    elif text.count(":") > 1:
        name = text
    else:
        name, colon, port = text.rpartition(":")
        if not colon or not port.isdigit():
            name = text
    return name.rstrip(".")


class HostAllowList:
    """Refuses, with 421 and a JSON `detail`, a request for a host not served
    here, and with 400 one that names its host twice."""

    def __init__(self, app: ASGIApp, bound: str, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.names = frozenset(host_name(h) for h in (*LOOPBACK, bound, *allowed) if h.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = _host_headers(scope)
            if len(given) > 1:
                detail = f"{len(given)} Host header lines; a request names its host once"
                await JSONResponse({"detail": detail}, 400)(scope, receive, send)
                return
            if given and host_name(given[0]) not in self.names:
                shown = given[0][:MAX_SHOWN]
                detail = (
                    f"Host {shown!r} is not served here: use the address the collector is "
                    "bound to, localhost, or a host listed in BADGE_ALLOWED_HOSTS"
                )
                await JSONResponse({"detail": detail}, 421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_headers(scope: Scope) -> list[str]:
    headers = scope.get("headers", ())
    return [bytes(value).decode("latin-1") for name, value in headers if name == b"host"]
