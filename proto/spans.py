"""The frozen records that cross from `proto` into the collector."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, TypeAlias

# An OTLP AnyValue as plain Python; bytes stay bytes, kvlists become dicts.
Value: TypeAlias = "str | bool | int | float | bytes | list[Value] | dict[str, Value] | None"


@dataclass(frozen=True, slots=True)
class Limits:
    """docs/otlp.md "Limits": what one request and one span may carry."""

    max_attributes: int = 256
    max_events: int = 1000
    max_string_bytes: int = 16 * 1024  # string and bytes values
    max_key_bytes: int = 256
    max_depth: int = 8
    max_spans: int = 10_000


@dataclass(frozen=True, slots=True)
class Selection:
    """Which span attributes the caller wants lifted out as Python values.

    `prefixes` lift every key starting with one of them (e.g. token counts).
    `markers` lift no value: a key starting with one of them lifts the
    marker itself as `True`, to say that the span has such attributes (a
    model's messages, say) without copying what can be many kilobytes.
    `marker_tails` pick a few keys under a marker whose value is wanted
    after all: a key under marker M that ends with one of `marker_tails[M]`
    is lifted with its value too (the name of each tool call the model
    requested, among kilobytes of its messages). Only keys that start with a
    marker are looked at, so a span pays nothing for it otherwise.
    Everything else stays in the span's encoded bytes, untouched.
    """

    keys: frozenset[str]
    prefixes: tuple[str, ...] = ()
    events: frozenset[str] = frozenset()  # span events, by name, lifted with their attributes
    markers: tuple[str, ...] = ()
    marker_tails: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class WireEvent(NamedTuple):
    """A span event the caller selected by name, after the span limits."""

    name: str
    time_ns: int
    attributes: Mapping[str, Value]


class WireSpan(NamedTuple):
    """One valid span: identity, timing and status decoded, the rest encoded.

    A NamedTuple, not a frozen dataclass: just as immutable, and built in
    one C call, which matters at tens of thousands of spans per second.
    """

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    flags: int
    attributes: Mapping[str, Value]
    resource: Mapping[str, Value]
    scope_name: str
    events: tuple[WireEvent, ...]  # the selected events, in the span's order
    encoded: bytes
    resource_encoded: bytes


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    """The valid spans of one request, and why the others were refused."""

    spans: tuple[WireSpan, ...]
    rejected: int
    reasons: Mapping[str, int]  # why -> how many spans

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(f"{count} span(s): {reason}" for reason, count in self.reasons.items())

    @property
    def error_message(self) -> str:
        return "; ".join(self.errors)
