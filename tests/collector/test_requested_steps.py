"""A run with no tool span takes as its steps the tool calls its LLM calls
requested (RUNS.md "Run fields", `steps`, `steps_source`; docs/runs.md):
trees built by hand the way each instrumentation writes the requested calls."""

from __future__ import annotations

import json
from typing import Any

from tests.collector.trees import Tree

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}


def genai_answer(*tools: str, text: str | None = None) -> str:
    """`gen_ai.output.messages` as the GenAI conventions write it."""
    parts: list[dict[str, Any]] = [
        {"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": {}}
        for i, name in enumerate(tools)
    ]
    if text is not None:
        parts.insert(0, {"type": "text", "content": text})
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}])


def genai_history(*tools: str) -> str:
    """`gen_ai.input.messages` of a later call: the earlier turn's calls and
    their results, repeated."""
    calls = [{"type": "tool_call", "id": f"c{i}", "name": n} for i, n in enumerate(tools)]
    results = [{"type": "tool_call_response", "id": f"c{i}"} for i in range(len(tools))]
    return json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
            {"role": "assistant", "parts": calls},
            {"role": "tool", "parts": results},
        ]
    )


def chat(**extra: Any) -> dict[str, Any]:
    return {**CHAT, "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5, **extra}


def test_a_model_client_only_run_counts_the_calls_the_model_requested() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add(
        "chat m", chat(**{"gen_ai.output.messages": genai_answer("weather", "time")}), parent=root
    )
    t.add(
        "chat m",
        chat(
            **{
                "gen_ai.input.messages": genai_history("weather", "time"),
                "gen_ai.output.messages": genai_answer("convert"),
            }
        ),
        parent=root,
    )
    t.add(
        "chat m",
        chat(
            **{
                "gen_ai.input.messages": genai_history("weather", "time", "convert"),
                "gen_ai.output.messages": genai_answer(text="It is 18C."),
            }
        ),
        parent=root,
    )
    run = t.run()
    assert (run.steps, run.steps_source, run.llm_calls) == (3, "requested", 3)
    assert [c.name for c in run.tool_calls] == ["weather", "time", "convert"]


def test_the_calls_repeated_in_later_inputs_are_never_counted_again() -> None:
    """The trap of every format: the prompt history repeats earlier calls."""
    t = Tree()
    root = t.add("badge.run")
    legacy_history = {
        "gen_ai.prompt": True,  # the marker proto lifts beside the keys under it
        "gen_ai.prompt.1.tool_calls.0.name": "weather",
        "gen_ai.prompt.1.tool_calls.0.id": "call_1",
        "gen_ai.prompt.1.tool_calls.1.name": "time",
    }
    openinference_history = {
        "llm.input_messages": True,
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "weather",
    }
    t.add(
        "chat m",
        chat(
            **legacy_history,
            **openinference_history,
            **{"gen_ai.input.messages": genai_history("weather", "time")},
        ),
        parent=root,
    )
    run = t.run()
    assert (run.steps, run.steps_source) == (0, "spans")


def test_openllmetrys_indexed_completion_keys_count_each_call_once() -> None:
    t = Tree()
    root = t.add("badge.run")
    answer = {
        "llm.request.type": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.completion": True,  # the marker proto lifts beside the keys under it
        "gen_ai.completion.0.tool_calls.0.name": "lookup",
        "gen_ai.completion.0.tool_calls.0.id": "call_a",
        "gen_ai.completion.0.tool_calls.0.arguments": "{}",
        "gen_ai.completion.0.tool_calls.1.id": "call_b",  # a call whose name was cut
        "gen_ai.completion.0.tool_calls.1.name": "lookup",
        "gen_ai.completion.0.tool_calls.2.id": "call_c",
    }
    t.add("openai.chat", answer, parent=root)
    run = t.run()
    assert (run.steps, run.steps_source) == (3, "requested")
    assert [c.name for c in run.tool_calls] == ["lookup", "lookup", ""]


def test_openinference_output_messages_count_parallel_calls() -> None:
    t = Tree()
    root = t.add("badge.run")
    chain = t.add("Agent.run", {"openinference.span.kind": "CHAIN"}, parent=root)
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.prompt": 5}
    llm["llm.output_messages"] = True  # the marker proto lifts beside the keys under it
    prefix = "llm.output_messages.0.message.tool_calls"
    llm |= {f"{prefix}.{j}.tool_call.function.name": f"t{j}" for j in range(4)}
    llm |= {f"{prefix}.{j}.tool_call.function.arguments": "{}" for j in range(4)}
    t.add("OpenAIChatGenerator.run", llm, parent=chain)
    run = t.run()
    assert (run.steps, run.steps_source) == (4, "requested")


def test_a_run_with_a_tool_span_counts_its_spans_not_the_requests() -> None:
    """The model asked for three calls; the one tool span is what ran."""
    t = Tree()
    root = t.add("badge.run")
    answer = {"gen_ai.output.messages": genai_answer("weather", "weather", "time")}
    t.add("chat m", chat(**answer), parent=root)
    t.add("execute_tool weather", {"gen_ai.operation.name": "execute_tool"}, parent=root)
    run = t.run()
    assert (run.steps, run.steps_source) == (1, "spans")


def test_a_tool_span_that_is_no_step_still_means_the_run_has_tool_spans() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add("chat m", chat(**{"gen_ai.output.messages": genai_answer("final_answer")}), parent=root)
    final = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "final_answer"}
    t.add("execute_tool final_answer", final, parent=root)
    run = t.run()
    assert (run.steps, run.steps_source) == (0, "spans")


def test_nested_spans_of_one_llm_call_do_not_double_its_requested_calls() -> None:
    """Two instrumentations of one call (a wrapper span and the client's),
    each carrying the same requested calls: the call's requests count once."""
    t = Tree()
    root = t.add("badge.run")
    answer = {"gen_ai.output.messages": genai_answer("weather", "time")}
    outer = t.add("chat m", chat(**answer), parent=root)
    t.add("chat m", chat(**answer), parent=outer)
    run = t.run()
    assert (run.llm_calls, run.steps, run.steps_source) == (1, 2, "requested")


def test_an_outer_span_without_requests_takes_them_from_the_span_nested_in_it() -> None:
    t = Tree()
    root = t.add("badge.run")
    outer = t.add("FallbackChatGenerator.run", chat(), parent=root)
    t.add("chat m", chat(**{"gen_ai.output.messages": genai_answer("weather")}), parent=outer)
    run = t.run()
    assert (run.llm_calls, run.steps, run.steps_source) == (1, 1, "requested")


def test_steps_source_is_null_when_the_run_shows_nothing_inside() -> None:
    t = Tree()
    t.add("badge.run")
    run = t.run()
    assert (run.steps, run.steps_source) == (None, None)


def test_requested_calls_on_a_span_that_is_no_llm_call_are_not_read() -> None:
    """`fetch_response` returns an earlier answer: no call, no steps."""
    t = Tree()
    root = t.add("badge.run")
    t.add("chat m", chat(), parent=root)
    fetched = {
        "gen_ai.operation.name": "fetch_response",
        "gen_ai.output.messages": genai_answer("weather"),
    }
    t.add("fetch_response", fetched, parent=root)
    run = t.run()
    assert (run.llm_calls, run.steps, run.steps_source) == (1, 0, "spans")


def test_output_nested_past_the_parsers_depth_requests_nothing_and_stops_nothing() -> None:
    t = Tree()
    root = t.add("badge.run")
    hostile = '[{"type": "tool_call"}, ' + "[" * 16_000
    t.add("chat m", chat(**{"gen_ai.output.messages": hostile}), parent=root)
    run = t.run()
    assert (run.llm_calls, run.steps, run.steps_source) == (1, 0, "spans")


def test_a_run_lists_its_first_thousand_requested_calls_and_counts_them_all() -> None:
    t = Tree()
    root = t.add("badge.run")
    many = genai_answer(*(f"t{i}" for i in range(300)))
    for turn in range(4):
        t.add("chat m", chat(**{"gen_ai.output.messages": many}), parent=root, start=turn)
    run = t.run()
    assert (run.steps, run.steps_source, len(run.tool_calls)) == (1_200, "requested", 1_000)
    assert run.tool_calls[0].name == "t0" and run.tool_calls[-1].name == "t99"
