"""The checks every part of a convention file shares: a mapping with known
fields, text, a compiled regex, a list. Each reports where it is wrong and
returns None, so the caller skips what it cannot build and goes on."""

from __future__ import annotations

import re
from collections.abc import Collection

from collector.conventions.problems import Report
from collector.conventions.yaml_tree import Located


def child(path: str, key: str | int) -> str:
    """`tool[0].when` from `tool[0]` and `when`; `any[1]` from `any` and 1."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def fields(
    node: Located,
    path: str,
    allowed: Collection[str],
    report: Report,
    what: str,
) -> dict[str, Located] | None:
    """A mapping's entries when it is one; each unknown field reported."""
    if not isinstance(node.value, dict):
        report.add(node.line, path or what, f"{what} must be a mapping")
        return None
    lines = node.key_lines or {}
    for key in node.value:
        if key not in allowed:
            report.add(lines.get(key, node.line), child(path, key), f"unknown field of {what}")
    return {key: value for key, value in node.value.items() if key in allowed}


def key_line(parent: Located, key: str) -> int:
    return (parent.key_lines or {}).get(key, parent.line)


def text(node: Located, path: str, report: Report, what: str = "text") -> str | None:
    if isinstance(node.value, str) and node.value.strip():
        return node.value
    report.add(node.line, path, f"must be {what}, not {_shown(node.value)}")
    return None


def regex(node: Located, path: str, report: Report) -> re.Pattern[str] | None:
    """A regex compiled now: an invalid one is a load error, never a span's."""
    source = node.value
    if not isinstance(source, str):
        report.add(node.line, path, f"must be a regular expression, not {_shown(source)}")
        return None
    try:
        return re.compile(source)
    except re.error as exc:
        report.add(node.line, path, f"invalid regular expression: {exc}")
        return None


def items(node: Located, path: str, report: Report, what: str) -> list[Located] | None:
    """A non-empty list's items."""
    if isinstance(node.value, list) and node.value:
        return list(node.value)
    report.add(node.line, path, f"must be a non-empty list of {what}")
    return None


def _shown(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None or value == "":
        return "empty"
    return repr(value)
