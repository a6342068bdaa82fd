"""An agent's name is a resource attribute, which docs/otlp.md "Limits" lets
run to 16 KiB: both databases store it whole. PostgreSQL's `agents.name` was
VARCHAR(500), so a longer `service.name` made the whole export a 400 there
(and the innocent agents beside it were refused with it), while SQLite took it."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from bench.support.otlp import agent_run
from tests.integration.harness import running_collector, wait_for


def test_an_agent_named_at_the_value_limit_is_stored_on_both_databases(
    tmp_path: Path, database_url: str
) -> None:
    long_name = "é" * 8_000  # 16,000 bytes of UTF-8: under the 16 KiB value limit
    message = ExportTraceServiceRequest()
    for name in (long_name, "short-neighbour"):
        message.resource_spans.extend(agent_run(service=name, tools=1).resource_spans)
    with running_collector(tmp_path, database_url=database_url) as c:
        reply = c.post(message.SerializeToString())
        assert reply.status_code == 200, reply.text
        partial = ExportTraceServiceResponse.FromString(reply.content).partial_success
        assert partial.rejected_spans == 0, partial.error_message
        wait_for(lambda: len(c.query("SELECT id FROM agents")) == 2)
        stored = {name for (name,) in c.query("SELECT name FROM agents")}
        assert stored == {long_name, "short-neighbour"}
