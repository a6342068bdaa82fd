"""The demo agent without a collector: its answers graded by the real graders, variant by
variant, over the example suite `make demo` screens; its spans, caught in memory."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer, StatusCode

from collector.cli import main
from collector.demo_agent.agent import Answer, DemoAgent
from collector.demo_agent.server import round_of
from collector.demo_agent.skills import FALLBACK, GREETING
from collector.demo_agent.variants import VARIANTS
from collector.screening.suite import Suite, load_suite
from scoring.graders import grade

SUITE = Path(__file__).resolve().parents[2] / "examples" / "concierge.yaml"
REFUND_TASKS = {"refund-window", "refund-eligible"}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUITE)


def answer(variant: str, prompt: str, task_id: str, round_number: int) -> Answer:
    agent = DemoAgent(NoOpTracer(), VARIANTS[variant], sleep=lambda _: None)
    return agent.answer(prompt, task_id, round_number, 256)


def passes(suite: Suite, variant: str, rounds: range = range(1, 4)) -> dict[str, list[bool]]:
    """Task id -> pass or fail by round, graded as `screen` grades."""
    return {
        task.id: [
            grade(
                task.grader,
                answer(variant, task.prompt, task.id, r).output,
                task.expected_output,
                "none",
                has_expected=task.has_expected,
            ).passed
            for r in rounds
        ]
        for task in suite.tasks
    }


def test_the_example_suite_mixes_every_grader_over_ten_tasks(suite: Suite) -> None:
    assert len(suite.tasks) == 10 and suite.rounds == 3
    graders = {task.grader for task in suite.tasks}
    assert {"exact", "contains", "words", "json", "regex", "completion"} <= graders


def test_the_json_lines_example_of_its_readme_says_what_the_yaml_says(
    suite: Suite, tmp_path: Path
) -> None:
    readme = (SUITE.parent / "README.md").read_text(encoding="utf-8")
    lines = tmp_path / "concierge.jsonl"
    lines.write_text(readme.split("```json\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    by_id = {task.id: task for task in suite.tasks}
    for task in load_suite(lines).tasks:
        same = by_id[task.id]
        assert (task.prompt, task.expected_output, task.grader) == (
            same.prompt,
            same.expected_output,
            same.grader,
        )


def test_the_baseline_passes_every_task_in_every_round(suite: Suite) -> None:
    assert passes(suite, "baseline", range(1, 11)) == {t.id: [True] * 10 for t in suite.tasks}


def test_slower_answers_like_the_baseline_and_only_waits_longer(suite: Suite) -> None:
    slept: dict[str, list[float]] = {"baseline": [], "slower": []}
    answers = {
        name: [
            DemoAgent(NoOpTracer(), VARIANTS[name], sleep=waits.append).answer(
                t.prompt, t.id, 1, 256
            )
            for t in suite.tasks
        ]
        for name, waits in slept.items()
    }
    assert answers["slower"] == answers["baseline"]  # the same text, tokens and tool calls
    model_calls = sum(a.model_calls for a in answers["slower"])
    extra = sum(slept["slower"]) - sum(slept["baseline"])
    assert extra == pytest.approx(0.15 * model_calls)


def test_broken_fails_exactly_the_two_refund_tasks_every_time(suite: Suite) -> None:
    outcomes = passes(suite, "broken")
    assert {task for task, ok in outcomes.items() if not any(ok)} == REFUND_TASKS
    assert all(all(ok) for task, ok in outcomes.items() if task not in REFUND_TASKS)
    wrong = answer("broken", "How many days do I have to return a parcel?", "refund-window", 1)
    assert "14 days" in wrong.output  # the EU policy, the tool call's argument says why


def test_flaky_gets_the_weather_right_about_half_the_time(suite: Suite) -> None:
    outcomes = passes(suite, "flaky", range(1, 41))
    weather = outcomes.pop("weather-oslo")
    assert 12 <= sum(weather) <= 28 and not all(weather[:3]) and any(weather[:3])
    assert all(all(ok) for ok in outcomes.values())


def test_an_answer_is_the_same_for_the_same_task_and_round() -> None:
    prompt = "What does order 2001 cost with 25% VAT?"
    first = answer("baseline", prompt, "vat-total", 2)
    assert first == answer("baseline", prompt, "vat-total", 2)
    other = answer("baseline", prompt, "vat-total", 3)
    assert other.output == first.output and other.output_tokens != first.output_tokens
    assert first.tool_calls == ("lookup_order", "calculator") and first.model_calls == 3
    body = first.body("baseline")
    assert body["output"] == "Order 2001 comes to $150.00 with 25% VAT."
    assert body["input_tokens"] == first.input_tokens and body["total_cost_usd"] > 0


def test_timings_vary_by_screening_and_answers_do_not() -> None:
    """Timing noise per screening, so a shift of the whole machine is not every task's shift."""
    slept: dict[str, list[float]] = {"s1": [], "s2": []}
    done = {
        screening: DemoAgent(NoOpTracer(), VARIANTS["baseline"], sleep=waits.append).answer(
            "Where is order 1042?", "order-status", 1, 256, screening
        )
        for screening, waits in slept.items()
    }
    assert done["s1"] == done["s2"] and slept["s1"] != slept["s2"]


def test_a_tool_that_fails_is_a_failed_tool_call_the_model_apologises_for() -> None:
    failed = answer("baseline", "Where is order 77?", "lost-order", 1)
    assert failed.tool_errors == 1 and failed.output.startswith("Sorry, I could not finish that")
    unknown = answer("baseline", "Sing me a song", "song", 1)
    assert unknown.tool_calls == () and unknown.model_calls == 1


def traced(prompt: str) -> tuple[Answer, list[ReadableSpan]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = DemoAgent(provider.get_tracer("t"), VARIANTS["baseline"], sleep=lambda _: None)
    return agent.answer(prompt, "t", 1, 99), list(exporter.get_finished_spans())


def test_its_spans_follow_the_genai_conventions_under_one_agent_span() -> None:
    done, spans = traced("Can order 1038 still be refunded? Answer as JSON")
    [agent] = [s for s in spans if s.name == "invoke_agent concierge"]
    assert agent.attributes is not None
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert all(
        s.parent is not None and s.parent.span_id == agent.context.span_id
        for s in spans
        if s is not agent
    )
    chats = [s for s in spans if s.name.startswith("chat ")]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(chats) == done.model_calls == 2 and len(tools) == len(done.tool_calls) == 2
    usage = [(s.attributes or {})["gen_ai.usage.input_tokens"] for s in chats]
    assert sum(usage) == done.input_tokens  # type: ignore[arg-type]
    assert (chats[0].attributes or {})["gen_ai.request.max_tokens"] == 99
    assert (chats[0].attributes or {})["gen_ai.response.finish_reasons"] == ("tool_calls",)
    first = tools[0].attributes or {}
    assert first["gen_ai.tool.name"] == "lookup_order" and first["gen_ai.tool.call.id"] == "call_1"
    assert json.loads(str(first["gen_ai.tool.call.arguments"])) == {"order_id": 1038}
    assert json.loads(str(first["gen_ai.tool.call.result"]))["delivered_days_ago"] == 20


def test_a_failed_tool_call_is_an_error_span() -> None:
    _, spans = traced("Where is order 77?")
    [tool] = [s for s in spans if s.name == "execute_tool lookup_order"]
    assert tool.status.status_code is StatusCode.ERROR and tool.status.description == "no order 77"
    assert (tool.attributes or {})["error.type"] == "ToolError"


@pytest.mark.parametrize(
    ("run_key", "expected"),
    [("scr-1/refund/2", 2), ("scr-1/a/b/c/10", 10), ("", 0), (None, 0), ("scr/task/x", 0)],
)
def test_the_round_is_the_last_part_of_the_run_key(run_key: object, expected: int) -> None:
    assert round_of(run_key) == expected


def test_a_port_in_use_is_exit_2_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo-agent", "--port", str(port), "--key", "k"]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("prompt", "output"),
    [
        ("Where is order 1038?", "Order 1038 was delivered 20 days ago."),
        ("Where is order 2001?", "Order 2001 is being prepared and should ship next week."),
        ("Convert 5 kg to pounds.", "5 kg is 11.0 lb."),
        ("How far is 10 km?", FALLBACK),  # a unit to convert from, none to convert to
        ("Hi there!", GREETING),
    ],
)
def test_prompts_outside_the_suite_get_answers_of_the_same_kind(prompt: str, output: str) -> None:
    assert answer("baseline", prompt, "any", 1).output == output
