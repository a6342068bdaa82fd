"""An export retried as the OpenTelemetry SDK exporters retry it.

opentelemetry-exporter-otlp 1.45 (exporter/otlp/common/http.py and
proto/grpc/exporter.py): at most 6 attempts within the export's 10 s
timeout; a 429, 502, 503 or 504 (UNAVAILABLE, RESOURCE_EXHAUSTED and a few
more over gRPC) is retried after 2^attempt seconds, +-20%, or after the
server's Retry-After over HTTP; a delay that would pass the timeout gives
the batch up (the SDK drops it). Any other refusal is final. The Python
gRPC exporter looks for RetryInfo under a `google.rpc.retryinfo-bin`
trailer, not in `grpc-status-details-bin` where the collector puts it, so
over gRPC it backs off by its own schedule.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import grpc

from bench.support.servers import ExportRefused, OtlpClient

ATTEMPTS, TIMEOUT_S = 6, 10.0
RETRYABLE_HTTP = frozenset({429, 502, 503, 504})
RETRYABLE_GRPC = frozenset(
    {
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


@dataclass
class Outcome:
    refusals: int = 0  # retryable refusals met on the way (each retried or fatal)
    delivered: bool = False


def export_like_sdk(client: OtlpClient, body: bytes, door: str) -> Outcome:
    """Export `body`, retrying as an SDK exporter; raises a final refusal."""
    outcome = Outcome()
    deadline = time.monotonic() + TIMEOUT_S
    for attempt in range(ATTEMPTS):
        delay = 2.0**attempt * random.uniform(0.8, 1.2)
        try:
            client.export(body, door)
            outcome.delivered = True
            return outcome
        except ExportRefused as refused:
            if refused.status not in RETRYABLE_HTTP:
                raise
            if refused.retry_after:
                delay = float(refused.retry_after)
        except grpc.RpcError as refused:
            if refused.code() not in RETRYABLE_GRPC:  # type: ignore[attr-defined]
                raise
        outcome.refusals += 1
        if attempt + 1 == ATTEMPTS or delay > deadline - time.monotonic():
            return outcome  # given up, as the SDK drops the batch
        time.sleep(delay)
    return outcome
