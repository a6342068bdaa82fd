"""AnyValue <-> plain Python values, and the attribute limits that touch them."""

from __future__ import annotations

from typing import Any

from proto.spans import Limits, Value


def sql_text(text: str) -> str:
    """NUL is valid UTF-8 but no SQL text type stores it (PostgreSQL refuses it).

    Lifted strings get U+FFFD instead; the span's exact bytes stay encoded.
    """
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def cut_text(text: str, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8, never splitting a character."""
    if len(text) * 4 <= max_bytes:  # a character is at most 4 bytes: nothing to cut
        return text
    raw = text.encode()
    return raw[:max_bytes].decode(errors="ignore") if len(raw) > max_bytes else text


def to_python(value: Any) -> Value:
    """An `AnyValue` message as a Python value, keeping the OTLP type."""
    return value_of(value, value.WhichOneof("value"))


def value_of(value: Any, which: str | None) -> Value:
    """The same, for a caller that has already asked which oneof field is set."""
    if which == "string_value":
        return sql_text(value.string_value)
    if which == "bool_value":
        return bool(value.bool_value)
    if which == "int_value":
        return int(value.int_value)
    if which == "double_value":
        return float(value.double_value)
    if which == "bytes_value":
        return bytes(value.bytes_value)
    if which == "array_value":
        return [to_python(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: to_python(kv.value) for kv in value.kvlist_value.values}
    return None


def attributes_to_python(attributes: Any) -> dict[str, Value]:
    return {kv.key: to_python(kv.value) for kv in attributes}


def nesting(value: Any, stop_after: int = 1 << 30) -> int:
    """How many array/kvlist levels an AnyValue nests (a scalar is 0).

    Iterative, so no input can exhaust the stack; it stops counting once past
    `stop_after`.
    """
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        which = item.WhichOneof("value")
        if which == "array_value":
            children = list(item.array_value.values)
        elif which == "kvlist_value":
            children = [kv.value for kv in item.kvlist_value.values]
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop_after:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def too_deep(attributes: Any, max_depth: int) -> bool:
    """Whether any value nests arrays/kvlists deeper than `max_depth`."""
    return any(nesting(kv.value, max_depth) > max_depth for kv in attributes)


def limit_attributes(attributes: Any, limits: Limits) -> int:
    """Apply docs/otlp.md "Limits" to one attribute list in place; returns how many
    attributes were dropped (for the owner's `dropped_attributes_count`).

    Keys are cut at `max_key_bytes`, string and bytes values (also inside
    arrays and kvlists) at `max_string_bytes`, extras past `max_attributes`
    dropped.
    """
    extra = len(attributes) - limits.max_attributes
    if extra > 0:
        del attributes[limits.max_attributes :]
    for kv in attributes:
        _limit_pair(kv, limits)
    return max(extra, 0)


def _limit_pair(kv: Any, limits: Limits) -> None:
    key = kv.key
    if len(key) * 4 > limits.max_key_bytes:
        cut = cut_text(key, limits.max_key_bytes)
        if cut is not key:
            kv.key = cut
    _limit_value(kv.value, limits)


def _limit_value(value: Any, limits: Limits) -> None:
    which = value.WhichOneof("value")
    if which == "string_value":
        text = value.string_value
        if len(text) * 4 > limits.max_string_bytes:
            cut = cut_text(text, limits.max_string_bytes)
            if cut is not text:
                value.string_value = cut
    elif which == "bytes_value":
        if len(value.bytes_value) > limits.max_string_bytes:
            value.bytes_value = value.bytes_value[: limits.max_string_bytes]
    elif which == "array_value":
        for item in value.array_value.values:
            _limit_value(item, limits)
    elif which == "kvlist_value":
        for kv in value.kvlist_value.values:
            _limit_pair(kv, limits)
