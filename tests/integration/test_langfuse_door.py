"""Langfuse's door (issue 38 item 4, docs/otlp.md "From the Langfuse SDK"):
`POST /api/public/otel/v1/traces` is the OTLP/HTTP door, and there the
password of `authorization: Basic` (the SDK's secret key) is an ingest key,
checked as a Bearer key is. Basic opens nothing else."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from bench.support.otlp import agent_run
from tests.integration.harness import Collector, running_collector

PATH = "/api/public/otel/v1/traces"


def basic(public: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{public}:{secret}".encode()).decode()


def langfuse_exporter(c: Collector, secret: str) -> OTLPSpanExporter:
    """An OTLP/HTTP exporter as the Langfuse SDK (3.x to 5.x) builds its own:
    base_url + the path, Basic of public:secret key, its headers, gzip (5.x)."""
    return OTLPSpanExporter(
        endpoint=f"{c.http_url}{PATH}",
        headers={
            "Authorization": basic("pk-lf-anything", secret),
            "x-langfuse-sdk-name": "python",
            "x-langfuse-sdk-version": "5.2.0",
            "x-langfuse-public-key": "pk-lf-anything",
            "x-langfuse-ingestion-version": "4",
        },
        compression=Compression.Gzip,
    )


def test_an_exporter_configured_as_the_langfuse_sdk_delivers_a_run(collector: Collector) -> None:
    c = collector
    provider = TracerProvider(resource=Resource.create({"service.name": "langfuse-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(langfuse_exporter(c, c.key)))
    tracer = provider.get_tracer("langfuse-sdk")
    with tracer.start_as_current_span(
        "agent run", attributes={"badge.task.id": "t-lf", "langfuse.observation.type": "agent"}
    ):
        with tracer.start_as_current_span(
            "lookup", attributes={"langfuse.observation.type": "tool"}
        ):
            pass
    provider.shutdown()
    c.settle()
    [(name, steps, task)] = c.query(
        "SELECT a.name, r.steps, r.task_id FROM runs r JOIN agents a ON a.id = r.agent_id"
    )
    assert (name, steps, task) == ("langfuse-agent", 1, "t-lf")
    accepted = c.http.get(f"{c.http_url}/metrics").text
    assert 'badge_export_requests_total{status="ok",transport="http"} 2.0' in accepted


def post(c: Collector, path: str, authorization: str | None) -> Any:
    headers = {"content-type": "application/x-protobuf"}
    if authorization is not None:
        headers["authorization"] = authorization
    body = agent_run(service="door-agent").SerializeToString()
    return c.http.post(f"{c.http_url}{path}", content=body, headers=headers)


def test_the_langfuse_door_refuses_as_the_otlp_door_does(collector: Collector) -> None:
    c = collector
    assert post(c, PATH, basic("pk", c.key)).status_code == 200
    assert post(c, PATH, f"Bearer {c.key}").status_code == 200  # the same door
    assert post(c, PATH, basic("", c.key)).status_code == 200  # any public key, even none
    unknown_basic = post(c, PATH, basic("pk", "bdg_unknown"))
    unknown_bearer = post(c, "/v1/traces", "Bearer bdg_unknown")
    assert unknown_basic.status_code == unknown_bearer.status_code == 401
    assert unknown_basic.content == unknown_bearer.content  # the same google.rpc.Status
    for malformed in ("Basic", "Basic !!!", basic("pk-without-secret", ""), "Basic " + "QQ=="):
        assert post(c, PATH, malformed).status_code == 401, malformed
    missing = post(c, PATH, None)
    assert missing.status_code == 401 and b"Basic" in missing.content
    assert c.http.get(f"{c.http_url}{PATH}").status_code == 405


def test_basic_opens_nothing_but_the_langfuse_door(collector: Collector) -> None:
    c = collector
    grader = c.service.keys.create("owner-a", "grader")
    assert post(c, "/v1/traces", basic("pk", c.key)).status_code == 401
    api = f"{c.http_url}/api/v1"
    assert post(c, PATH, f"Bearer {c.key}").status_code == 200
    c.settle()
    [(run_id,)] = c.query("SELECT id FROM runs")
    for key in (c.key, grader):
        headers = {"authorization": basic("pk", key)}
        assert c.http.get(f"{api}/runs/{run_id}/trace", headers=headers).status_code == 401
        assert c.http.get(f"{api}/me/radar-weights", headers=headers).status_code == 401
        grade = {"agent": "door-agent", "run_key": "k", "success": True}
        assert c.http.post(f"{api}/grades", json=grade, headers=headers).status_code == 401
        weights = {"weights": {"latency": 1}}
        assert (
            c.http.put(f"{api}/me/radar-weights", json=weights, headers=headers).status_code == 401
        )


def test_under_insecure_a_keyless_langfuse_export_is_local(tmp_path: Path) -> None:
    with running_collector(tmp_path, insecure=True) as c:
        assert post(c, PATH, None).status_code == 200
        assert post(c, PATH, basic("pk", "bdg_unknown")).status_code == 401  # a wrong key is wrong
