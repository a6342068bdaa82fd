"""The screener's view of a collector: health, the key, and the read API, over HTTP.

The `screen` command is a client like any other: it reads what the
collector computed rather than computing scores itself, so a screening's
numbers are the API's and the dashboard's. Transport failures come back as
values (`Reply` with status 0) for the command to turn into exit codes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

API = "/api/v1"
PAGE_SIZE = 500  # the API's largest page


@dataclass(frozen=True, slots=True)
class Reply:
    """A status and a decoded JSON body; status 0 means no answer (`body` says why)."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status <= 299

    def detail(self) -> str:
        if isinstance(self.body, dict) and "detail" in self.body:
            return str(self.body["detail"])
        return str(self.body)


class CollectorClient:
    """GETs and the probe export, with the key when one is given (owner views need it)."""

    def __init__(self, url: str, key: str | None, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)
        self._openapi: Any = None

    def close(self) -> None:
        self._http.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> Reply:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            return Reply(0, f"cannot reach {self.url}: {type(exc).__name__}: {exc}")
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = response.text
        return Reply(response.status_code, body)

    def health(self) -> Reply:
        return self._send("GET", "/healthz")

    def probe_key(self) -> Reply:
        """An empty OTLP export (SCREEN.md section 6): 401 or 403 means the key is refused."""
        headers = {"content-type": "application/x-protobuf"}
        return self._send("POST", "/v1/traces", content=b"", headers=headers)

    def get(self, path: str, **params: Any) -> Reply:
        query = {k: v for k, v in params.items() if v is not None}
        return self._send("GET", f"{API}{path}", params=query)

    def pages(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, page by page; stops at the first error."""
        cursor: str | None = None
        while True:
            reply = self.get(path, page_size=PAGE_SIZE, cursor=cursor, **params)
            if not reply.ok:
                return
            yield from reply.body["items"]
            cursor = reply.body.get("next_cursor")
            if not cursor:
                return

    def agents_named(self, name: str) -> list[str]:
        """The ids of the agents with this name (one per owner that has one)."""
        return [a["id"] for a in self.pages("/agents", all="true") if a["name"] == name]

    def accepts(self, path: str, parameter: str) -> bool:
        """Does this collector's GET `path` take `parameter`? Read from its OpenAPI document,
        because an unknown query parameter is ignored, not refused (docs/api.md)."""
        if self._openapi is None:
            reply = self._send("GET", "/openapi.json")
            self._openapi = reply.body if reply.ok and isinstance(reply.body, dict) else {}
        operation = self._openapi.get("paths", {}).get(f"{API}{path}", {}).get("get", {})
        return any(p.get("name") == parameter for p in operation.get("parameters", []))
