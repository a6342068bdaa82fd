"""The demo agent's tools: real functions over small tables, no network.

They compute what they return (the calculator parses the expression, the
converter multiplies), so a wrong answer in a screening is the model's doing,
visible in the tool call's arguments on its span, never a canned string. A
tool that cannot answer raises ToolError, which the agent records as a failed
tool call (`tool_errors` in the run) and tells the model about.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any, Final


class ToolError(Exception):
    """The tool could not answer (an unknown order, a malformed expression)."""


ORDERS: Final[dict[int, dict[str, Any]]] = {
    1042: {"status": "shipped", "carrier": "DHL", "eta": "Friday", "total_usd": 64.5},
    1038: {"status": "delivered", "carrier": "UPS", "delivered_days_ago": 20, "total_usd": 39.0},
    2001: {"status": "processing", "carrier": None, "eta": "next week", "total_usd": 120.0},
}
# Days to return a parcel, by region: the US store's own policy, the EU's legal minimum.
REFUND_POLICIES: Final[dict[str, dict[str, Any]]] = {
    "US": {"days": 30, "condition": "unused and in its original packaging"},
    "EU": {"days": 14, "condition": "any reason, within the withdrawal period"},
}
WEATHER: Final[dict[str, dict[str, Any]]] = {
    "oslo": {"temp_c": 4, "conditions": "light snow"},
    "osaka": {"temp_c": 18, "conditions": "sunshine"},
    "lisbon": {"temp_c": 21, "conditions": "clear skies"},
}
TEMPERATURES: Final = frozenset({"C", "F", "K"})
# unit -> (dimension, factor to the dimension's base unit); temperature is affine, handled apart
UNITS: Final[dict[str, tuple[str, float]]] = {
    "km": ("length", 1000.0),
    "mi": ("length", 1609.344),
    "m": ("length", 1.0),
    "kg": ("mass", 1.0),
    "lb": ("mass", 0.45359237),
}
_OPERATORS: Final[dict[type, Callable[..., float]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def lookup_order(order_id: int) -> dict[str, Any]:
    """An order's status, carrier and total."""
    order = ORDERS.get(int(order_id))
    if order is None:
        raise ToolError(f"no order {order_id}")
    return {"order_id": int(order_id), **order}


def refund_policy(region: str = "US") -> dict[str, Any]:
    """How many days a customer has to return a parcel, in the store's region."""
    policy = REFUND_POLICIES.get(region.upper())
    if policy is None:
        raise ToolError(f"no refund policy for region {region!r}")
    return {"region": region.upper(), **policy}


def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city of the table."""
    weather = WEATHER.get(city.strip().lower())
    if weather is None:
        raise ToolError(f"no weather for {city!r}")
    return {"city": city.strip().title(), **weather}


def calculator(expression: str) -> float:
    """Evaluate + - * / ** and parentheses over numbers; anything else is refused."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not an expression: {expression!r}") from exc
    return float(_evaluate(tree.body))


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ToolError("not a number: True or False")
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        try:
            return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
        except (ZeroDivisionError, OverflowError) as exc:
            raise ToolError(str(exc)) from exc
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ToolError(f"unsupported expression: {ast.unparse(node)!r}")


def convert_units(value: float, from_unit: str, to_unit: str) -> float:
    """Length, mass and temperature (C, F, K)."""
    source, target = from_unit.strip(), to_unit.strip()
    if source.upper() in TEMPERATURES and target.upper() in TEMPERATURES:
        return _from_kelvin(_to_kelvin(float(value), source.upper()), target.upper())
    if source not in UNITS or target not in UNITS or UNITS[source][0] != UNITS[target][0]:
        raise ToolError(f"cannot convert {from_unit!r} to {to_unit!r}")
    return float(value) * UNITS[source][1] / UNITS[target][1]


def _to_kelvin(value: float, unit: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[unit]


TOOLS: Final[dict[str, Callable[..., Any]]] = {
    "lookup_order": lookup_order,
    "refund_policy": refund_policy,
    "get_weather": get_weather,
    "calculator": calculator,
    "convert_units": convert_units,
}


def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    """Run a tool by name; wrong arguments are a ToolError like any other failure."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolError(f"no tool {name!r}")
    try:
        return tool(**arguments)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"{name}: {exc}") from exc
