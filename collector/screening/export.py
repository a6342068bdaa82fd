"""The screener's OTLP/HTTP span exporter: retried through a collector's faults, and counted.

A screening during a 10 s database outage lost 59 of its 80 runs, and one
during a 48 s collector restart 26 of 60 (issue 37 item 5): the SDK's
exporter gives a batch up after a few tries. This one sends the same
protobuf (the SDK's own encoder) and retries what OTLP/HTTP says to retry
(429, 502, 503, 504, and no answer at all), honouring `Retry-After`, for as
long as the collector has been failing less than `retry_s` (`--settle`,
at least 10 s, the SDK's default export timeout). Counted per collector
outage, not per batch: once an outage has lasted `retry_s`, later batches
get one try each until an export succeeds again, so a collector that never
comes back costs the screening `retry_s`, not `retry_s` per batch.

What is not delivered is counted (`lost`, with the reasons), so the command
can say so and exit 2 (docs/screening.md "Exit codes").
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

import httpx
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from collector.api_client import RETRYABLE, backoff_s, retry_after_s

MIN_RETRY_S: Final = 10.0  # OTEL_EXPORTER_OTLP_TIMEOUT's default
ATTEMPT_TIMEOUT_S: Final = 10.0
EVERY_SPAN: Final = 1 << 62  # "rejected" for an export refused whole
log = logging.getLogger(__name__)


class RetryingExporter(SpanExporter):
    """POST /v1/traces with the screening's key; thread-safe counts of what arrived."""

    def __init__(self, endpoint: str, headers: Mapping[str, str], retry_s: float) -> None:
        self.endpoint = endpoint
        self.retry_s = max(retry_s, MIN_RETRY_S)
        self._http = httpx.Client(
            headers={**headers, "content-type": "application/x-protobuf"},
            timeout=ATTEMPT_TIMEOUT_S,
        )
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._failing_since: float | None = None
        self.exported = 0
        self.lost = 0
        self.reasons: Counter[str] = Counter()  # why spans were lost, by what the door said

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = encode_spans(spans).SerializePartialToString()
        attempt = 0
        while True:
            rejected, wait, why = self._post(body)
            if wait is None:  # answered: accepted (maybe in part) or refused for good
                self._failing_since = None  # the collector answers: any outage is over
                return self._count(len(spans), rejected, why)
            now = time.monotonic()
            if self._failing_since is None:
                self._failing_since = now
            left = self._failing_since + self.retry_s - now
            # The last try falls at the end of the window: the outage is ridden out in full.
            wait = min(backoff_s(attempt) if wait < 0 else wait, left)
            if left <= 0 or self._stop.wait(wait):
                return self._count(len(spans), len(spans), f"{why} (retried {self.retry_s:g} s)")
            attempt += 1
            log.info("export failed (%s); retrying in %.1f s", why, wait)

    def _post(self, body: bytes) -> tuple[int, float | None, str | None]:
        """(spans rejected, seconds to wait before retrying (None: final; -1: back off), why)."""
        try:
            response = self._http.post(self.endpoint, content=body)
        except httpx.HTTPError as exc:
            return 0, -1.0, f"no answer: {type(exc).__name__}"
        status = response.status_code
        if status in RETRYABLE:
            after = retry_after_s(response.headers)
            return 0, -1.0 if after is None else after, f"HTTP {status}"
        if not 200 <= status <= 299:
            return EVERY_SPAN, None, f"HTTP {status}"
        partial = ExportTraceServiceResponse()
        try:
            partial.ParseFromString(response.content)
        except Exception:  # an answer we cannot read is still an OK: the spans were taken
            return 0, None, None
        rejected = partial.partial_success.rejected_spans
        message = partial.partial_success.error_message or "rejected"
        return rejected, None, (message if rejected else None)

    def _count(self, sent: int, rejected: int, why: str | None) -> SpanExportResult:
        lost = min(sent, rejected)
        with self._lock:
            self.exported += sent - lost
            self.lost += lost
            if lost and why is not None:
                self.reasons[why] += lost
        if lost:  # the command sums them up at the end; per batch only with --verbose
            log.info("%d of %d spans were not delivered: %s", lost, sent, why)
        return SpanExportResult.SUCCESS if not lost else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._stop.set()
        self._http.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # nothing is held here: the batch processor holds the queue
