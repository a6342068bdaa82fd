"""One settings object, built once in the CLI and passed down (BADGE_ prefix)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of the collector; docs/operations.md "Settings" lists the required ones."""

    model_config = SettingsConfigDict(env_prefix="BADGE_", extra="ignore")

    database_url: str = Field(
        "sqlite:///./badge-collector.db", description="SQLAlchemy URL of the store"
    )
    host: str = Field("127.0.0.1", description="address both doors bind")
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="comma-separated host names the HTTP port answers besides the bound "
        "address and localhost; a request with any other Host is refused (DNS rebinding)",
    )
    grpc_port: int = Field(4317, ge=0, le=65535, description="OTLP/gRPC port (0 = any free)")
    http_port: int = Field(
        4318, ge=0, le=65535, description="OTLP/HTTP and read API port (0 = any free)"
    )
    insecure: bool = Field(False, description="accept keyless ingest into owner `local`")
    run_timeout_s: float = Field(300.0, gt=0, description="root-less run becomes `timeout`")
    max_agents_per_owner: int = Field(
        10_000, gt=0, description="agents one owner may have; spans of more are refused"
    )
    max_run_latency_s: float = Field(
        86_400.0, gt=0, description="a run longer than this has no latency (a clock went wrong)"
    )
    orphan_grace_s: float = Field(30.0, ge=0, description="wait before a top span is the root")
    max_body_bytes: int = Field(16 * 1024 * 1024, gt=0, description="request body limit")
    max_spans_per_request: int = Field(10_000, gt=0, description="spans in one request")
    max_inflight_bytes: int = Field(
        32 * 1024 * 1024,
        gt=0,
        description="export bytes admitted but not yet answered, shared max-min fairly "
        'among the owners that compete for them (docs/otlp.md "Overload")',
    )
    # The doors' own limits (docs/reliability.md "Slow and idle clients"): no
    # connection, stream or upload holds a thread, a descriptor or budget for
    # long without sending.
    max_connections: int = Field(
        1000,
        gt=0,
        description="open connections per door; past it HTTP closes the longest-idle "
        "connection or answers 503, gRPC refuses the connection",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="time to send a request's head (HTTP request line and headers; "
        "gRPC connection handshake), from the first byte or the connection's opening",
    )
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        description="time to send a request's body (HTTP) or message (gRPC) once its "
        "head is in; past it 408 / DEADLINE_EXCEEDED",
    )
    idle_timeout_s: float = Field(
        15.0, gt=0, description="an HTTP keep-alive connection idle this long is closed"
    )
    grpc_max_concurrent_exports: int = Field(
        32,
        gt=0,
        description="gRPC exports received or in progress at once; past it UNAVAILABLE at once",
    )
    # The read gate (api.read_gate, docs/api.md "Errors"): reads must not
    # take the threads and interpreter ingest and health need (issue 39).
    max_concurrent_reads: int = Field(
        2,
        gt=0,
        description="read API and dashboard requests answered at once (health and the "
        "OTLP door aside); keyless ones hold at most half",
    )
    max_waiting_reads: int = Field(
        512,
        ge=0,
        description="requests that may wait up to 5 s for one of those; past it 503 + "
        "Retry-After; keyless ones hold at most half",
    )
    queue_max_spans: int = Field(200_000, gt=0, description="ingest queue bound")
    span_retention_days: float = Field(30.0, gt=0, description="older spans are deleted")
    retention_interval_s: float = Field(
        3600.0, gt=0, description="how often a retention pass starts"
    )
    # Grades posted before their run (docs/loop.md "Graded outcomes"): bounded
    # per owner in bytes, and in time by the retention pass.
    grade_wait_days: float = Field(
        7.0, gt=0, description="a grade whose run has not arrived is deleted after this long"
    )
    grade_quota_bytes: int = Field(
        64 * 1024 * 1024,
        gt=0,
        description="bytes of grades waiting for their runs one owner may hold; past it 429",
    )
    sqlite_synchronous: str = Field(
        "FULL", description="SQLite synchronous pragma; NORMAL trades durability for speed"
    )
    assembly_delay_s: float = Field(0.2, ge=0, description="debounce before runs recompute")
    sweep_interval_s: float = Field(1.0, gt=0, description="how often timers are checked")
    decode_workers: int | None = Field(
        None, ge=0, le=64, description="decoder processes (unset: one per core, at most 4)"
    )
    # The agent gauges of /metrics (collector.agent_metrics): bounded, so a
    # scrape stays one small query and Prometheus a known number of series.
    metrics_max_agents: int = Field(
        1000,
        ge=0,
        description="agents /metrics exports gauges for, the most recent runs first; 0: none",
    )
    metrics_window_days: float = Field(
        30.0, gt=0, description="/metrics exports agents whose last run started this recently"
    )
    metrics_refresh_s: float = Field(
        5.0,
        ge=0,
        description="/metrics renders the agent gauges at most once per this many seconds; "
        "scrapes in between get that rendering",
    )
    log_level: str = Field("INFO", description="logging level")
    # docs/certificates.md: never stored in the database.
    signing_key: str | None = Field(
        None,
        description="PEM Ed25519 key file that signs certificates (created if missing); "
        "unset: badge-signing-key.pem beside a SQLite database, none with PostgreSQL",
    )

    # CONVENTIONS.md section 4: the user's convention files, tried before the built-ins.
    conventions: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="convention files, or folders of *.yaml / *.yml files, tried in this "
        "order before the built-in ones; BADGE_CONVENTIONS separates paths with `:`",
    )

    @field_validator("conventions", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        """BADGE_CONVENTIONS is paths separated by `:` (PATH's way)."""
        if isinstance(value, str):
            return tuple(path for path in value.split(":") if path.strip())
        return value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        """BADGE_ALLOWED_HOSTS and --allowed-hosts are comma-separated names."""
        if isinstance(value, str):
            return tuple(name.strip() for name in value.split(",") if name.strip())
        return value
