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
        # CPU each step of the ingest path took (bench/ingest.py --stages reads it):
        # the decoders' steps (collector.ingest.decoding.STAGES) and the writer's commits.
        self.ingest_cpu_seconds = Counter(
            "badge_ingest_cpu_seconds",
            "CPU seconds of ingest steps: decode, recognise, rows, assemble (in the "
            "decoders), write (the batch writer's transactions)",
            ["stage"],
            registry=r,
        )
        self.queue_depth = Gauge("badge_queue_depth_spans", "Spans waiting", registry=r)
        self.inflight_bytes = Gauge(
            "badge_inflight_bytes", "Bytes of export requests admitted, not answered", registry=r
        )
        # The doors' connection limits (collector.receivers.http_guard): what
        # was closed and why, counted instead of logged one line each.
        self.http_connections_open = Gauge(
            "badge_http_connections_open", "Open connections on the HTTP port", registry=r
        )
        self.http_connections_closed = Counter(
            "badge_http_connections_closed",
            "HTTP connections the collector closed: head_timeout, body_timeout, "
            "idle_timeout, head_too_large, evicted (idle, to make room), refused (full)",
            ["reason"],
            registry=r,
        )
        # The read gate (api.read_gate): reads past the bound, by caller class.
        self.reads_refused = Counter(
            "badge_read_requests_refused",
            "Read API and dashboard requests refused with 503 past BADGE_MAX_CONCURRENT_READS "
            "and its line; by caller: keyed or keyless",
            ["caller"],
            registry=r,
        )
        self.grpc_exports_in_progress = Gauge(
            "badge_grpc_exports_in_progress",
            "gRPC Export calls holding a slot (BADGE_GRPC_MAX_CONCURRENT_EXPORTS)",
            registry=r,
        )
        self.accept_errors = Counter(
            "badge_accept_errors",
            "Connections the HTTP port could not accept (descriptor limit and the like)",
            registry=r,
        )
        # Times a run became terminal. A run can stop being terminal: a later
        # span gives its spans to another run (an instrumented agent's spans
        # that came before the screener's root), or makes it running again;
        # those are counted in badge_runs_unfinalised, so finalised minus
        # unfinalised is the terminal runs stored (docs/operations.md "Metrics").
        self.runs_finalised = Counter(
            "badge_runs_finalised",
            "Times a run became terminal (a run that stops being terminal and becomes so "
            "again counts again; see badge_runs_unfinalised)",
            ["status"],
            registry=r,
        )
        self.runs_unfinalised = Counter(
            "badge_runs_unfinalised",
            "Terminal runs that stopped being so: removed (their spans joined another run) "
            "or running again; by the status they had",
            ["status"],
            registry=r,
        )

        # CONVENTIONS.md section 6: spans stored that no convention recognised,
        # by instrumentation scope; collector.writer.unrecognised caps the
        # label's values (the rest count as scope="other").
        self.spans_unrecognised = Counter(
            "badge_spans_unrecognised",
            "Spans stored that no convention recognised (parentless spans aside), by "
            'instrumentation scope: at most 50 scope values, the rest as scope="other"',
            ["scope"],
            registry=r,
        )

        # Reclassification (CONVENTIONS.md section 5, collector.runs.reclassify).
        self.runs_reclassified = Counter(
            "badge_runs_reclassified",
            "Runs recomputed because the conventions changed since their spans were recognised",
            registry=r,
        )
        self.runs_reclassify_remaining = Gauge(
            "badge_runs_reclassify_remaining",
            "Runs still recognised under other conventions, waiting to be reclassified",
            registry=r,
        )
        self.runs_reclassify_sealed = Gauge(
            "badge_runs_reclassify_sealed",
            "Runs under other conventions that keep their counts: retention removed their "
            "spans (sealed)",
            registry=r,
        )

    def observe_stages(self, cpu_s: dict[str, float]) -> None:
        """Add one request's CPU seconds per ingest step."""
        for stage, seconds in cpu_s.items():
            self.ingest_cpu_seconds.labels(stage).inc(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
