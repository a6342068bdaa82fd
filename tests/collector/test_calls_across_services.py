"""One tool call seen by several services counts once (issue 38; RUNS.md's
nested-duplicate rule applied across the trace's span tree): trees built by
hand as an agent calling a tool on an MCP server that exports its own spans
shows them."""

from __future__ import annotations

from typing import Any

from collector.assembly.runs import Run
from tests.collector.trees import Tree

AGENT, SERVER = "agent-1", "mcp-server"
REMOTE = 0x300  # OTLP span flags: the parent came in `traceparent`


def execute_tool(name: str, call: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call,
    }


def mcp_client(name: str) -> dict[str, Any]:
    """FastMCP's client span: a tool by both markers, no call id."""
    return {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool"} | {
        "gen_ai.tool.name": name
    }


SEND = {"mcp.method.name": "tools/call", "jsonrpc.request.id": "4"}  # name only in the span name


def server_call(name: str) -> dict[str, Any]:
    return {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "jsonrpc.request.id": "4",
    }


def by_agent(runs: list[Run]) -> dict[str, Run]:
    return {run.agent_id: run for run in runs}


def mcp_call(t: Tree, parent: str, name: str, call: str) -> str:
    """One MCP tool call: four spans, the last in the server's service."""
    tool = t.add(f"execute_tool {name}", execute_tool(name, call), parent=parent)
    client = t.add(f"tools/call {name}", mcp_client(name), parent=tool, kind=3)
    send = t.add(f"MCP send tools/call {name}", SEND, parent=client, kind=3)
    t.add(
        f"tools/call {name}",
        server_call(name),
        parent=send,
        agent=SERVER,
        flags=REMOTE,
        kind=2,
        scope="mcp-python-sdk",
    )
    return tool


def test_an_mcp_call_seen_by_the_agent_the_client_and_the_server_is_one_step() -> None:
    t = Tree()
    root = t.add("badge.run")
    agent = t.add("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, parent=root)
    mcp_call(t, agent, "get_weather", "call_1")
    mcp_call(t, agent, "get_time", "call_2")
    runs = by_agent(t.runs())
    assert runs[AGENT].steps == 2
    assert [c.name for c in runs[AGENT].tool_calls] == ["get_weather", "get_time"]
    # the server's spans are its own run, which counts no step of the caller's
    server = runs[SERVER]
    assert server.steps in (0, None) and server.llm_calls == 0
    names = {s.span_id: s.name for s in t.spans}
    reasons = {names[i]: v.reason for i, v in server.verdicts.items() if v.role == "tool"}
    assert reasons and all("(in another run of the trace)" in why for why in reasons.values())


def test_the_servers_span_is_the_same_call_with_a_non_tool_span_between() -> None:
    """The server wraps the call in a span of its own (a request handler)."""
    t = Tree()
    root = t.add("badge.run")
    tool = t.add("execute_tool lookup", execute_tool("lookup", "c1"), parent=root)
    handler = t.add("POST /mcp", {}, parent=tool, agent=SERVER, flags=REMOTE, kind=2)
    t.add("tools/call lookup", server_call("lookup"), parent=handler, agent=SERVER)
    runs = by_agent(t.runs())
    assert runs[AGENT].steps == 1
    assert runs[SERVER].steps == 0


def test_a_server_tool_that_calls_a_different_tool_counts_both() -> None:
    """The server's tool runs another tool of its own: a second step, of the
    server's run; the call the agent made is still one step of the agent's."""
    t = Tree()
    root = t.add("badge.run")
    tool = t.add("execute_tool plan_trip", execute_tool("plan_trip", "c1"), parent=root)
    served = t.add(
        "tools/call plan_trip", server_call("plan_trip"), parent=tool, agent=SERVER, flags=REMOTE
    )
    t.add("execute_tool geocode", execute_tool("geocode", "s1"), parent=served, agent=SERVER)
    runs = by_agent(t.runs())
    assert runs[AGENT].steps == 1
    assert runs[SERVER].steps == 1
    assert [c.name for c in runs[SERVER].tool_calls] == ["geocode"]


def test_a_tool_that_calls_a_different_tool_in_one_service_counts_both() -> None:
    t = Tree()
    root = t.add("badge.run")
    outer = t.add("execute_tool plan", execute_tool("plan", "c1"), parent=root)
    inner = t.add("chain", {}, parent=outer)
    t.add("execute_tool geocode", execute_tool("geocode", "c1"), parent=inner)
    assert t.run().steps == 2


def test_a_server_call_whose_caller_made_no_tool_span_counts_in_the_servers_run() -> None:
    """Only the server traced the call: nothing above it to be a duplicate of."""
    t = Tree()
    root = t.add("badge.run")
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    llm = t.add("chat m", chat, parent=root)
    t.add("tools/call lookup", server_call("lookup"), parent=llm, agent=SERVER, flags=REMOTE)
    runs = by_agent(t.runs())
    assert runs[AGENT].steps == 0
    assert runs[SERVER].root_span_id is not None


def test_an_agent_between_makes_the_inner_call_its_own_even_across_services() -> None:
    """An agent used as a tool runs in another service and calls a tool of
    the same name: that agent's own step, as within one service."""
    t = Tree()
    root = t.add("badge.run")
    tool = t.add("execute_tool search", execute_tool("search", "c1"), parent=root)
    remote_agent = t.add(
        "invoke_agent researcher",
        {"gen_ai.operation.name": "invoke_agent"},
        parent=tool,
        agent=SERVER,
        flags=REMOTE,
    )
    t.add("execute_tool search", execute_tool("search", "r1"), parent=remote_agent, agent=SERVER)
    runs = by_agent(t.runs())
    assert runs[AGENT].steps == 1
    assert runs[SERVER].steps == 1
