"""CONVENTIONS.md section 3: sources, and usage read through them."""

from __future__ import annotations

from typing import Any

from tests.collector.conventions_kit import one_rule, recognise


def tool_name(source: str, attrs: dict[str, Any] | None = None, **span: Any) -> Any:
    conventions = one_rule("{name: '.*'}", extra=f"    tool_name: {source}\n")
    return recognise(conventions, attrs=attrs, **span).tool_name


def test_an_attribute_source_yields_the_value_unquoted_with_its_case() -> None:
    assert tool_name("[{attr: k}]", {"k": '"Search"'}) == "Search"
    assert tool_name("[{attr: k}]", {"k": 7}) == 7


def test_the_first_place_that_yields_a_value_wins() -> None:
    source = "[{attr: a}, {attr: b}, {attr: c}]"
    assert tool_name(source, {"b": "second", "c": "third"}) == "second"
    assert tool_name(source, {"a": "", "c": "third"}) == "third"  # empty text yields nothing
    assert tool_name(source, {}) is None


def test_a_json_path_reads_into_json_text() -> None:
    usage = '{"usage": {"input": 12, "cached": [3, 4]}}'
    assert tool_name("[{attr: u, json: usage.input}]", {"u": usage}) == 12
    assert tool_name("[{attr: u, json: usage.cached.1}]", {"u": usage}) == 4
    assert tool_name("[{attr: u, json: 0.total}]", {"u": '[{"total": 9}]'}) == 9


def test_a_json_path_reads_maps_and_lists_as_they_are() -> None:
    assert tool_name("[{attr: u, json: a.b}]", {"u": {"a": {"b": "x"}}}) == "x"
    assert tool_name("[{attr: u, json: '1'}]", {"u": ["x", "y"]}) == "y"


def test_json_text_inside_a_json_string_literal_is_read() -> None:
    assert tool_name("[{attr: u, json: input}]", {"u": '"{\\"input\\": 5}"'}) == 5


def test_a_json_path_that_leads_nowhere_lets_the_next_place_try() -> None:
    source = "[{attr: u, json: usage.input}, {attr: fallback}]"
    assert tool_name(source, {"u": '{"usage": {}}', "fallback": "f"}) == "f"
    assert tool_name(source, {"u": "not json", "fallback": "f"}) == "f"
    assert tool_name(source, {"u": '{"usage": [1]}', "fallback": "f"}) == "f"


def test_json_nested_past_the_parsers_depth_is_no_value_and_no_error() -> None:
    """A 16 KB attribute of brackets is within the span limits; Python's JSON
    parser gives up on it with RecursionError, which must not stop ingest."""
    source = "[{attr: u, json: input}, {attr: fallback}]"
    assert tool_name(source, {"u": "[" * 16_000, "fallback": "f"}) == "f"


def test_a_name_source_yields_group_one_of_the_span_name() -> None:
    source = "[{name: '^Function: (\\w+)'}]"
    assert tool_name(source, name="Function: lookup_order") == "lookup_order"
    assert tool_name(source, name="Agent: triage") is None


def test_a_resource_source_reads_the_resource() -> None:
    assert tool_name("[{resource: tool}]", {"tool": "span"}, resource={"tool": "res"}) == "res"


def test_a_source_may_be_one_place_alone() -> None:
    assert tool_name("{attr: k}", {"k": "x"}) == "x"


def test_a_rule_without_a_source_reads_the_built_in_keys() -> None:
    conventions = one_rule("{name: '.*'}")
    found = recognise(conventions, attrs={"tool.name": "t", "gen_ai.tool.call.id": "c1"})
    assert (found.tool_name, found.call_id) == ("t", "c1")


USAGE = """\
convention: u
version: 1
llm:
  - when: {attr: kind, equals: LLM}
    model: [{attr: m}]
agent:
  - when: {attr: kind, equals: AGENT}
usage:
  input_tokens: [{attr: usage, json: prompt}]
  output_tokens: [{attr: usage, json: completion}]
  cost_usd: [{attr: usage, json: cost}]
"""


def test_usage_is_read_on_the_conventions_llm_and_agent_spans() -> None:
    from tests.collector.conventions_kit import convention_set

    conventions = convention_set(USAGE)
    usage = '{"prompt": 10, "completion": "4", "cost": 0.5}'
    call = recognise(conventions, attrs={"kind": '"LLM"', "usage": usage, "m": "gpt"})
    assert (call.role, call.model, call.input_tokens, call.output_tokens, call.cost_usd) == (
        "llm",
        "gpt",
        10,
        "4",  # a numeric string counts as its number when counted (collector.assembly.facts)
        0.5,
    )
    agent = recognise(conventions, attrs={"kind": "AGENT", "usage": usage})
    assert (agent.role, agent.input_tokens, agent.output_tokens) == ("agent", 10, "4")


def test_without_usage_the_built_in_genai_keys_are_read() -> None:
    conventions = one_rule("{attr: kind}", role="llm")
    call = recognise(
        conventions,
        attrs={"kind": 1, "gen_ai.usage.prompt_tokens": 3, "llm.token_count.completion": 2},
    )
    assert (call.input_tokens, call.output_tokens) == (3, 2)
