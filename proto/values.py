"""AnyValue <-> plain Python values, and the span-level limits that touch them."""

from __future__ import annotations

from typing import Any

from proto.spans import Value


def sql_text(text: str) -> str:
    """NUL is valid UTF-8 but no SQL text type stores it (PostgreSQL refuses it).

    Lifted strings get U+FFFD instead; the span's exact bytes stay encoded.
    """
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


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


def nesting(value: Any) -> int:
    """How many array/kvlist levels an AnyValue nests (a scalar is 0)."""
    which = value.WhichOneof("value")
    if which == "array_value":
        return 1 + max((nesting(v) for v in value.array_value.values), default=0)
    if which == "kvlist_value":
        return 1 + max((nesting(kv.value) for kv in value.kvlist_value.values), default=0)
    return 0


def truncate_strings(attributes: Any, max_bytes: int) -> None:
    """Cut string values (also inside arrays/kvlists) to max_bytes of UTF-8."""
    for kv in attributes:
        _truncate_value(kv.value, max_bytes)


def _truncate_value(value: Any, max_bytes: int) -> None:
    which = value.WhichOneof("value")
    if which == "string_value":
        raw = value.string_value.encode()
        if len(raw) > max_bytes:
            value.string_value = raw[:max_bytes].decode(errors="ignore")
    elif which == "array_value":
        for item in value.array_value.values:
            _truncate_value(item, max_bytes)
    elif which == "kvlist_value":
        truncate_strings(value.kvlist_value.values, max_bytes)
