"""An owner's agents are bounded (BADGE_MAX_AGENTS_PER_OWNER): spans of one
more agent are refused through partial_success, never the owner's others
and never another owner's (issue 29: one key created 100,000 agents)."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from bench.support.otlp import agent_run
from tests.integration.harness import running_collector


def many_agents(names: list[str]) -> bytes:
    message = ExportTraceServiceRequest()
    for name in names:
        message.resource_spans.extend(agent_run(service=name, tools=0).resource_spans)
    return message.SerializeToString()


def test_agents_past_the_bound_are_refused_and_the_others_kept(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url, max_agents_per_owner=3) as c:
        reply = c.post(many_agents([f"agent-{i}" for i in range(5)]))
        assert reply.status_code == 200
        answer = ExportTraceServiceResponse.FromString(reply.content)
        assert answer.partial_success.rejected_spans == 2 * 3  # two agents, 3 spans each
        assert "agent limit: an owner has at most 3 agents" in answer.partial_success.error_message
        stored = {name for (name,) in c.query("SELECT name FROM agents")}
        assert len(stored) == 3 and stored < {f"agent-{i}" for i in range(5)}
        again = c.post(many_agents([min(stored), "agent-9"]))
        partial = ExportTraceServiceResponse.FromString(again.content).partial_success
        assert partial.rejected_spans == 3  # a stored agent goes on; agent-9 would be a fourth
        other = c.service.keys.create("someone-else")
        fine = c.post(many_agents(["agent-7"]), key=other)
        assert (
            ExportTraceServiceResponse.FromString(fine.content).partial_success.rejected_spans == 0
        )
