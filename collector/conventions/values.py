"""Attribute values as conditions compare them and sources yield them
(CONVENTIONS.md section 2, "Normalised value").

Instrumentations write the same thing many ways: `TOOL`, `tool`, ` tool `,
`"TOOL"` with the quotes (a JSON string literal, as MLflow stores enums),
`12` and `"12"`. A condition compares the normalised forms:
- a string that is a JSON string literal is unquoted once, then stripped;
- a number, or a string that spells one, compares by value (`12` = `"12.0"`);
- a boolean is `true` / `false`; any other string compares case-insensitively.
`matches` sees the text unquoted but not case-folded, and a source yields
the value unquoted, its case kept (a tool's name is shown as it was given).
"""

from __future__ import annotations

import json
import re
from typing import Any

# A decimal number as a string may spell it: 12, -3, 0.5, .5, 1e-3 (no nan, inf, 1_000).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER_START = frozenset("0123456789+-.")
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=repr).encode

Canonical = str | int | float  # what `canon` gives: equal values compare equal


def unquote(text: str) -> str:
    """Stripped, and a JSON string literal (`"TOOL"` with its quotes) unquoted once."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        if isinstance(inner, str):
            return inner.strip()
    return text


def canon(value: Any) -> Canonical:
    """The normalised value `equals` and `in` compare."""
    if isinstance(value, str):
        return _canon_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    return _canon_text(as_text(value))


def _canon_text(value: str) -> Canonical:
    text = unquote(value)
    if text and text[0] in _NUMBER_START and _NUMBER.fullmatch(text):
        try:
            return int(text) if _INTEGER.fullmatch(text) else float(text)
        except ValueError:  # more digits than int() converts
            pass
    return text.casefold()


def as_text(value: Any) -> str:
    """The normalised value as text, for `matches`: unquoted, not case-folded."""
    if isinstance(value, str):
        return unquote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list | dict):
        return _compact(value)
    return str(value)


def yielded(value: Any) -> Any:
    """What a source yields for a value: unquoted text with its case, or the
    value as it is; None for no value (absent, or empty text)."""
    if isinstance(value, str):
        value = unquote(value)
        return value or None
    return value


def parse_json(value: Any) -> Any:
    """An attribute read as JSON: text parsed (a JSON document held in a JSON
    string literal, parsed once more), a map or list taken as it is; None
    for anything else."""
    if isinstance(value, dict | list):
        return value
    if not isinstance(value, str):
        return None
    try:
        found = json.loads(value)
        if isinstance(found, str):
            found = json.loads(found)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    return found


def at_path(document: Any, path: tuple[str, ...]) -> Any:
    """The value at a dotted path (`usage.input`, `0.total`): map keys by name,
    list items by 0-based index; None where the path leads nowhere."""
    for step in path:
        if isinstance(document, dict):
            document = document.get(step)
        elif isinstance(document, list) and step.isdigit():
            index = int(step)
            document = document[index] if index < len(document) else None
        else:
            return None
        if document is None:
            return None
    return document
