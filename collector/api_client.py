"""The one HTTP client of a collector's read API and its writes, for the CLI and the screener.

`badge-collector ... --url` reads and `screen` both talk to a running
collector through this (issue 42 item 15: there were two, one on urllib,
one on httpx). httpx, because the screener needs it anyway for the agents
it screens: one library for timeouts, pooled keep-alive connections and
transport errors, which come back here as values (`Reply` with status 0)
for the command to turn into exit codes, never as exceptions.

A fault of the collector (a database outage answers 503 + Retry-After) is
retried as an OpenTelemetry exporter retries (OTLP/HTTP "Failures": 429,
502, 503, 504 and no answer at all), for up to `retry_s`: the screener
rides out an outage of up to `--settle` seconds (docs/screening.md).
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from typing import Any, Final
from urllib.parse import quote

import httpx

API: Final = "/api/v1"
PAGE_SIZE: Final = 500  # the API's largest page
# What OTLP/HTTP says to retry (the OpenTelemetry exporters' own list).
RETRYABLE: Final = frozenset({429, 502, 503, 504})
FIRST_BACKOFF_S: Final = 0.5
MAX_BACKOFF_S: Final = 8.0


def segment(text: str) -> str:
    """One path segment: every reserved character escaped, `/` included."""
    return quote(text, safe="")


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` as seconds from now (RFC 9110: delay-seconds or an HTTP date)."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = parsedate_to_datetime(value).timestamp()
            return max(0.0, float(moment) - time.time())
        except (TypeError, ValueError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def backoff_s(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, ... at most 8 s, each +-20% so that clients spread out."""
    return min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2.0**attempt) * random.uniform(0.8, 1.2)


@dataclass(frozen=True, slots=True)
class Reply:
    """A status and a decoded JSON body; status 0 means no answer (`body` says why)."""

    status: int
    body: Any
    # An earlier try of this request got no answer: a write may have been done already.
    unanswered_before: bool = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status <= 299

    def detail(self) -> str:
        if isinstance(self.body, dict) and "detail" in self.body:
            return str(self.body["detail"])
        return str(self.body)


class ApiClient:
    """Requests to one collector, with the key when one is given (owner views need it)."""

    def __init__(
        self, url: str, key: str | None, *, timeout_s: float = 30.0, retry_s: float = 0.0
    ) -> None:
        self.url = url.rstrip("/")
        self.retry_s = retry_s
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)
        self._stop = threading.Event()

    def close(self) -> None:
        self._stop.set()
        self._http.close()

    def send(self, method: str, path: str, **kwargs: Any) -> Reply:
        """One request, retried while the collector answers a fault, for up to `retry_s`."""
        deadline = time.monotonic() + self.retry_s
        attempt = 0
        unanswered = False
        while True:
            reply, wait = self._once(method, path, **kwargs)
            if unanswered:
                reply = replace(reply, unanswered_before=True)
            if wait is None:
                return reply
            unanswered = unanswered or reply.status == 0
            left = deadline - time.monotonic()
            wait = min(backoff_s(attempt) if wait < 0 else wait, left)  # a last try at the end
            if left <= 0 or self._stop.wait(wait):
                return reply
            attempt += 1

    def _once(self, method: str, path: str, **kwargs: Any) -> tuple[Reply, float | None]:
        """The reply, and how long to wait before trying again (None: do not; -1: back off)."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            return Reply(0, f"cannot reach {self.url}: {type(exc).__name__}: {exc}"), -1.0
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = response.text
        reply = Reply(response.status_code, body)
        if response.status_code not in RETRYABLE:
            return reply, None
        after = retry_after_s(response.headers)
        return reply, -1.0 if after is None else after

    def health(self) -> Reply:
        return self.send("GET", "/healthz")

    def probe_key(self) -> Reply:
        """An empty OTLP export (SCREEN.md section 6): 401 or 403 means the key is refused."""
        headers = {"content-type": "application/x-protobuf"}
        return self.send("POST", "/v1/traces", content=b"", headers=headers)

    def get(self, path: str, **params: Any) -> Reply:
        query = {k: v for k, v in params.items() if v is not None}
        return self.send("GET", f"{API}{path}", params=query)

    def post(self, path: str, document: Any) -> Reply:
        return self.send("POST", f"{API}{path}", json=document)

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
