"""The demo agent's tools compute their answers, and refuse what they cannot answer."""

from __future__ import annotations

import pytest

from collector.demo_agent.tools import (
    ToolError,
    calculator,
    call_tool,
    convert_units,
    get_weather,
    lookup_order,
    refund_policy,
)


@pytest.mark.parametrize(
    ("expression", "value"),
    [("3 * 99", 297.0), ("17 / 100 * 2340", 397.8), ("-(2 + 3) ** 2", -25.0), ("1.5", 1.5)],
)
def test_the_calculator_evaluates_arithmetic(expression: str, value: float) -> None:
    assert calculator(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    "expression", ["__import__('os')", "1 +", "x * 2", "1 / 0", "True + 1", "'a' * 3", "10 ** 999"]
)
def test_the_calculator_refuses_anything_else(expression: str) -> None:
    with pytest.raises(ToolError):
        calculator(expression)


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (26.2, "mi", "km", 42.1648),
        (350, "F", "C", 176.6667),
        (0, "C", "F", 32.0),
        (100, "C", "K", 373.15),
        (10, "kg", "lb", 22.0462),
    ],
)
def test_units_convert(value: float, source: str, target: str, expected: float) -> None:
    assert convert_units(value, source, target) == pytest.approx(expected, abs=1e-4)


def test_units_of_different_kinds_do_not_convert() -> None:
    with pytest.raises(ToolError):
        convert_units(1, "km", "kg")
    with pytest.raises(ToolError):
        convert_units(1, "parsec", "km")


def test_the_tables_answer_and_refuse() -> None:
    assert lookup_order(1042)["status"] == "shipped"
    assert refund_policy()["days"] == 30 and refund_policy("eu")["days"] == 14
    assert get_weather(" oslo ")["city"] == "Oslo"
    with pytest.raises(ToolError):
        lookup_order(1)
    with pytest.raises(ToolError):
        refund_policy("MARS")
    with pytest.raises(ToolError):
        get_weather("Atlantis")


def test_a_call_by_name_turns_bad_arguments_into_a_tool_error() -> None:
    assert call_tool("calculator", {"expression": "2 + 2"}) == 4.0
    with pytest.raises(ToolError, match="no tool"):
        call_tool("rm_rf", {})
    with pytest.raises(ToolError, match="lookup_order"):
        call_tool("lookup_order", {"order": 1042})
    with pytest.raises(ToolError, match="lookup_order"):
        call_tool("lookup_order", {"order_id": "forty-two"})
