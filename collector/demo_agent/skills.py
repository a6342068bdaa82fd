"""What the scripted model knows: a prompt pattern per skill, and its turns.

A skill is asked once per model turn with the tool results so far; it
answers with the tool calls of its next turn or with the final text. So a
task that needs an order's total before the VAT can be computed takes three
model calls and two tool calls, as a real tool-using model would, and the
steps a screening counts are the calls made here. The first skill whose
pattern matches the prompt answers; the order matters (an order's refund
before its status). The variants' mistakes enter only through `Quirks`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from collector.demo_agent.chat import Quirks, ToolResult

Calls = list[tuple[str, dict[str, Any]]]
Step = Calls | str
Skill = Callable[[re.Match[str], list[ToolResult], Quirks], Step]

GREETING: Final = (
    "Hello and welcome! I can track your orders, explain refunds, convert units "
    "and check the weather for you."
)
FALLBACK: Final = (
    "Sorry, I can only track orders, explain refunds, do arithmetic, convert units "
    "and check the weather."
)
_NUMBER = r"-?\d[\d,]*(?:\.\d+)?"
# unit words -> the converter's unit; the first alternative that matches wins
_UNIT_WORDS: Final = (
    (r"kilomet(?:re|er)s?|km", "km"),
    (r"miles?|mi", "mi"),
    (r"kilograms?|kg", "kg"),
    (r"pounds?|lbs?", "lb"),
    (r"°\s?F|fahrenheit", "F"),
    (r"°\s?C|celsius", "C"),
)
_UNIT = re.compile(
    "|".join(f"(?<![a-z])(?P<u{i}>{w})(?![a-z])" for i, (w, _) in enumerate(_UNIT_WORDS)), re.I
)
_SYMBOLS: Final = {"F": "°F", "C": "°C"}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _shown(value: float) -> str:
    """At most two decimals, no trailing zeros: 397.8, 297, 0.25."""
    return f"{round(value, 2):.2f}".rstrip("0").rstrip(".")


def order_refund(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:  # both lookups at once: parallel tool calls
        order = {"order_id": int(m["order"])}
        return [("lookup_order", order), ("refund_policy", {"region": quirks.refund_region})]
    order, policy = seen[0].value, seen[1].value
    days_ago = order.get("delivered_days_ago")
    refundable = days_ago is None or days_ago <= policy["days"]
    return json.dumps({"order": order["order_id"], "refundable": refundable})


def order_with_vat(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        return [("lookup_order", {"order_id": int(m["order"])})]
    if len(seen) == 1:
        total = seen[0].value["total_usd"]
        return [("calculator", {"expression": f"{total} * (1 + {m['rate']} / 100)"})]
    return f"Order {m['order']} comes to ${seen[1].value:.2f} with {m['rate']}% VAT."


def order_status(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        return [("lookup_order", {"order_id": int(m["order"])})]
    order = seen[0].value
    if order["status"] == "shipped":
        return (
            f"Order {order['order_id']} has shipped with {order['carrier']} and is in transit; "
            f"it should arrive on {order['eta']}."
        )
    if order["status"] == "delivered":
        return f"Order {order['order_id']} was delivered {order['delivered_days_ago']} days ago."
    return f"Order {order['order_id']} is being prepared and should ship {order['eta']}."


def refund_window(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        return [("refund_policy", {"region": quirks.refund_region})]
    policy = seen[0].value
    return (
        f"You can return a parcel within {policy['days']} days of delivery, {policy['condition']}."
    )


def seat_quote(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        return [("calculator", {"expression": f"{m['seats']} * {_number(m['price'])}"})]
    return json.dumps({"seats": int(m["seats"]), "total": seen[0].value})


def percent_of(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        expression = f"{_number(m['percent'])} / 100 * {_number(m['base'])}"
        return [("calculator", {"expression": expression})]
    return _shown(seen[0].value)


def convert(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    prompt = m.string
    found = [(u.start(), _unit_of(u)) for u in _UNIT.finditer(prompt)]
    source = next((unit for at, unit in found if at >= m.end("value")), None)
    target = next((unit for _, unit in found if unit != source), None)
    if source is None or target is None:
        return FALLBACK
    if not seen:
        arguments = {"value": _number(m["value"]), "from_unit": source, "to_unit": target}
        return [("convert_units", arguments)]
    value = f"{seen[0].value:.1f}"
    if "number only" in prompt.lower():
        return value
    return f"{m['value']} {_SYMBOLS.get(source, source)} is {value} {_SYMBOLS.get(target, target)}."


def _unit_of(match: re.Match[str]) -> str:
    index = next(int(name[1:]) for name, text in match.groupdict().items() if text)
    return _UNIT_WORDS[index][1]


def weather(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    if not seen:
        city = "Osaka" if quirks.misread_city else m["city"]
        return [("get_weather", {"city": city})]
    report = seen[0].value
    return f"{report['city']} is {report['temp_c']} °C with {report['conditions']} right now."


def greeting(m: re.Match[str], seen: list[ToolResult], quirks: Quirks) -> Step:
    return GREETING


SKILLS: Final[tuple[tuple[re.Pattern[str], Skill], ...]] = tuple(
    (re.compile(pattern, re.I), skill)
    for pattern, skill in (
        (r"order (?P<order>\d+)\b.*\brefund", order_refund),
        (r"order (?P<order>\d+) cost with (?P<rate>\d+(?:\.\d+)?)\s*% VAT", order_with_vat),
        (r"order (?P<order>\d+)", order_status),
        (r"\b(?:return|refund)", refund_window),
        (rf"(?P<seats>\d+) seats? at \$(?P<price>{_NUMBER})", seat_quote),
        (rf"(?P<percent>{_NUMBER})\s*% of (?P<base>{_NUMBER})", percent_of),
        (rf"(?P<value>{_NUMBER})\s*(?:{_UNIT.pattern})", convert),
        (r"weather in (?P<city>[A-Z][a-z]+)", weather),
        (r"\b(?:hello|hi|welcome|greet)", greeting),
    )
)


def plan(prompt: str, seen: list[ToolResult], quirks: Quirks) -> Step:
    """The next turn for this prompt: tool calls, or the answer."""
    failed = [r for r in seen if r.error is not None]
    if failed:  # a real model would apologise with what the tool said
        return f"Sorry, I could not finish that: {failed[0].error}."
    for pattern, skill in SKILLS:
        match = pattern.search(prompt)
        if match:
            return skill(match, seen, quirks)
    return FALLBACK
