"""Request bytes -> valid `WireSpan`s plus a count of refused ones.

The hot path: parse with upb, walk each span's attribute keys once, lift only
the selected keys, apply the OTLP.md limits in place, and keep the span as its
re-encoded bytes. Nothing here allocates a dict per attribute.
"""

from __future__ import annotations

import zlib
from typing import Any

from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from proto.errors import DecodeError, TooLarge
from proto.otlp_json import json_to_request
from proto.spans import DecodedRequest, Limits, Selection, Value, WireSpan
from proto.values import attributes_to_python, nesting, sql_text, truncate_strings, value_of

_CHUNK = 64 * 1024
_NESTED = frozenset({"array_value", "kvlist_value"})
_ZERO_TRACE, _ZERO_SPAN = bytes(16), bytes(8)


def gunzip_limited(body: bytes, limit: int) -> bytes:
    """Decompress gzip without ever holding more than `limit` + one chunk.

    A gzip bomb stops at the limit (TooLarge); a broken stream is DecodeError.
    """
    out = bytearray()
    data = body
    try:
        while data:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            pending = data
            while pending:
                out += inflater.decompress(pending, limit + 1 - len(out))
                if len(out) > limit:
                    raise TooLarge(f"decompressed body exceeds {limit} bytes")
                pending = inflater.unconsumed_tail
            if not inflater.eof:
                raise DecodeError("gzip stream is truncated")
            data = inflater.unused_data  # a further gzip member, if any
    except zlib.error as exc:
        raise DecodeError(f"broken gzip stream: {exc}") from None
    return bytes(out)


def parse_request(body: bytes, content: str) -> Any:
    """Bytes -> `ExportTraceServiceRequest`; content is "protobuf" or "json"."""
    if content == "json":
        return json_to_request(body)
    try:
        return ExportTraceServiceRequest.FromString(body)
    except ProtobufDecodeError as exc:
        raise DecodeError(f"malformed protobuf ExportTraceServiceRequest: {exc}") from None


def decode_request(request: Any, selection: Selection, limits: Limits) -> DecodedRequest:
    """Validate every span, lift the selected attributes, keep the rest encoded."""
    total = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    if total > limits.max_spans:
        raise TooLarge(f"request holds {total} spans; the limit is {limits.max_spans}")
    spans: list[WireSpan] = []
    errors: dict[str, int] = {}
    trace_hex: dict[bytes, str] = {}  # spans of one trace share the id: hex it once
    for resource_spans in request.resource_spans:
        resource = attributes_to_python(resource_spans.resource.attributes)
        resource_encoded = resource_spans.resource.SerializeToString()
        for scope_spans in resource_spans.scope_spans:
            scope_name = sql_text(scope_spans.scope.name)
            for span in scope_spans.spans:
                record = _record(
                    span, trace_hex, resource, resource_encoded, scope_name, selection, limits
                )
                if isinstance(record, str):
                    errors[record] = errors.get(record, 0) + 1
                else:
                    spans.append(record)
    messages = tuple(f"{count} span(s): {reason}" for reason, count in errors.items())
    return DecodedRequest(tuple(spans), sum(errors.values()), messages)


def _record(
    span: Any,
    trace_hex: dict[bytes, str],
    resource: dict[str, Value],
    resource_encoded: bytes,
    scope_name: str,
    selection: Selection,
    limits: Limits,
) -> WireSpan | str:
    """One span as a WireSpan, or why it is refused (OTLP.md "Both doors").

    Each protobuf field is read once: every read builds a new Python object.
    """
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        return "trace_id must be 16 bytes and not all zero"
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return "span_id must be 8 bytes and not all zero"
    if parent and len(parent) != 8:
        return "parent_span_id must be empty or 8 bytes"
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if end < start:
        return "end_time_unix_nano is before start_time_unix_nano"
    lifted = _lift(span, selection, limits)
    if lifted is None:
        return f"attribute nested deeper than {limits.max_depth} levels"
    trace = trace_hex.get(trace_id)
    if trace is None:
        trace = trace_hex[trace_id] = trace_id.hex()
    status = span.status
    has_events = bool(span.events)
    return WireSpan(
        trace,
        span_id.hex(),
        parent.hex() if parent and parent != _ZERO_SPAN else "",
        sql_text(span.name),
        span.kind,
        start,
        end,
        status.code,
        sql_text(status.message),
        span.flags,
        lifted,
        resource,
        scope_name,
        _exception_type(span) if has_events else None,
        _encode(span, limits, has_events),
        resource_encoded,
    )


def _lift(span: Any, selection: Selection, limits: Limits) -> dict[str, Value] | None:
    """One pass over the keys: lift wanted values, check nesting; None = too deep."""
    lifted: dict[str, Value] = {}
    keys, prefixes, max_depth = selection.keys, selection.prefixes, limits.max_depth
    attributes = span.attributes
    for kv in attributes:
        value = kv.value
        text = value.string_value  # "" unless a string: most values are
        if not text:  # a string cannot nest; it needs no WhichOneof (~15% of the pass)
            which = value.WhichOneof("value")
            if which in _NESTED and nesting(value) > max_depth:
                return None
        key = kv.key
        if key in keys or (prefixes and key.startswith(prefixes)):
            lifted[key] = sql_text(text) if text else value_of(value, which)
    extra = len(attributes) - limits.max_attributes
    if extra > 0:
        del attributes[limits.max_attributes :]
        span.dropped_attributes_count += extra
    return lifted


def _encode(span: Any, limits: Limits, has_events: bool) -> bytes:
    """The span's bytes after the event limit and string truncation (OTLP.md)."""
    if has_events:
        extra = len(span.events) - limits.max_events
        if extra > 0:
            del span.events[limits.max_events :]
            span.dropped_events_count += extra
    encoded: bytes = span.SerializeToString()
    if len(encoded) > limits.max_string_bytes:  # only a big span can hold a long string
        truncate_strings(span.attributes, limits.max_string_bytes)
        for event in span.events:
            truncate_strings(event.attributes, limits.max_string_bytes)
        encoded = span.SerializeToString()
    return encoded


def _exception_type(span: Any) -> str | None:
    for event in span.events:
        if event.name == "exception":
            for kv in event.attributes:
                if kv.key == "exception.type":
                    return sql_text(kv.value.string_value)
    return None
