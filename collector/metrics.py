"""Prometheus metrics of one collector, in its own registry (no globals)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.spans_received = Counter(
            "badge_spans_received", "Spans received", ["transport"], registry=r
        )
        self.spans_accepted = Counter(
            "badge_spans_accepted", "Spans durably stored", ["transport"], registry=r
        )
        self.spans_rejected = Counter(
            "badge_spans_rejected", "Spans refused", ["transport", "reason"], registry=r
        )
        self.export_requests = Counter(
            "badge_export_requests",
            "Export requests by answer",
            ["transport", "status"],
            registry=r,
        )
        self.commit_seconds = Histogram(
            "badge_batch_commit_seconds",
            "Group commit latency",
            registry=r,
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
        )
        self.queue_depth = Gauge("badge_queue_depth_spans", "Spans waiting", registry=r)
        self.inflight_bytes = Gauge(
            "badge_inflight_bytes", "Bytes of export requests admitted, not answered", registry=r
        )
        self.runs_finalised = Counter(
            "badge_runs_finalised", "Runs that became terminal", ["status"], registry=r
        )

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
