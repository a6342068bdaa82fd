"""One settings object, built once in the CLI and passed down (BADGE_ prefix)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of the collector; docs/operations.md "Settings" lists the required ones."""

    model_config = SettingsConfigDict(env_prefix="BADGE_", extra="ignore")

    database_url: str = Field(
        "sqlite:///./badge-collector.db", description="SQLAlchemy URL of the store"
    )
    host: str = Field("127.0.0.1", description="address both doors bind")
    grpc_port: int = Field(4317, ge=0, le=65535, description="OTLP/gRPC port (0 = any free)")
    http_port: int = Field(
        4318, ge=0, le=65535, description="OTLP/HTTP and read API port (0 = any free)"
    )
    insecure: bool = Field(False, description="accept keyless ingest into owner `local`")
    run_timeout_s: float = Field(300.0, gt=0, description="root-less run becomes `timeout`")
    max_run_latency_s: float = Field(
        86_400.0, gt=0, description="a run longer than this has no latency (a clock went wrong)"
    )
    orphan_grace_s: float = Field(30.0, ge=0, description="wait before a top span is the root")
    max_body_bytes: int = Field(16 * 1024 * 1024, gt=0, description="request body limit")
    max_spans_per_request: int = Field(10_000, gt=0, description="spans in one request")
    max_inflight_bytes: int = Field(
        32 * 1024 * 1024, gt=0, description="export bytes admitted but not yet answered"
    )
    queue_max_spans: int = Field(200_000, gt=0, description="ingest queue bound")
    span_retention_days: float = Field(30.0, gt=0, description="older spans are deleted")
    retention_interval_s: float = Field(
        3600.0, gt=0, description="how often a retention pass starts"
    )
    sqlite_synchronous: str = Field(
        "FULL", description="SQLite synchronous pragma; NORMAL trades durability for speed"
    )
    assembly_delay_s: float = Field(0.2, ge=0, description="debounce before runs recompute")
    sweep_interval_s: float = Field(1.0, gt=0, description="how often timers are checked")
    decode_workers: int | None = Field(
        None, ge=0, le=64, description="decoder processes (unset: one per core, at most 4)"
    )
    log_level: str = Field("INFO", description="logging level")
