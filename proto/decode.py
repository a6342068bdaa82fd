"""Request bytes -> valid `WireSpan`s plus a count of refused ones.

The hot path: parse with upb, walk each span's attribute keys once, lift only
the selected keys, apply the docs/otlp.md limits in place, and keep the span as its
re-encoded bytes. Nothing here allocates a dict per attribute.
"""

from __future__ import annotations

import zlib
from typing import Any

from proto.codecs import CODECS
from proto.errors import DecodeError, TooLarge
from proto.spans import DecodedRequest, Limits, Selection, Value, WireEvent, WireSpan
from proto.values import (
    attributes_to_python,
    cut_text,
    limit_attributes,
    nesting,
    sql_text,
    to_python,
    too_deep,
    value_of,
)

_CHUNK = 64 * 1024
_NESTED = frozenset({"array_value", "kvlist_value"})
_ZERO_TRACE, _ZERO_SPAN = bytes(16), bytes(8)
# docs/otlp.md "Limits": timestamps are stored as signed 64-bit integers.
_MAX_NS = (1 << 63) - 1
# The values the OTLP 1.x enums define; anything else cannot be a real span.
_MAX_KIND, _MAX_STATUS_CODE = 5, 2


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
    """Bytes -> `ExportTraceServiceRequest`; content is a codec's name
    ("protobuf" or "json", proto.codecs)."""
    return CODECS[content].parse(body)


def decode_body(
    body: bytes,
    content: str,
    *,
    gzip: bool,
    max_bytes: int,
    selection: Selection,
    limits: Limits,
) -> DecodedRequest:
    """A request's bytes -> its valid span records: gunzip within `max_bytes`,
    parse with the codec named `content`, validate and lift. TooLarge or
    DecodeError when the request as a whole cannot be taken."""
    plain = gunzip_limited(body, max_bytes) if gzip else body
    return decode_request(parse_request(plain, content), selection, limits)


def decode_request(request: Any, selection: Selection, limits: Limits) -> DecodedRequest:
    """Validate every span, lift the selected attributes, keep the rest encoded."""
    total = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    if total > limits.max_spans:
        raise TooLarge(f"request holds {total} spans; the limit is {limits.max_spans}")
    spans: list[WireSpan] = []
    errors: dict[str, int] = {}
    trace_hex: dict[bytes, str] = {}  # spans of one trace share the id: hex it once
    for resource_spans in request.resource_spans:
        refused = _limit_resource(resource_spans.resource, limits)
        if refused:
            count = sum(len(ss.spans) for ss in resource_spans.scope_spans)
            if count:
                errors[refused] = errors.get(refused, 0) + count
            continue
        resource = attributes_to_python(resource_spans.resource.attributes)
        resource_encoded = resource_spans.resource.SerializeToString()
        for scope_spans in resource_spans.scope_spans:
            scope_name = sql_text(cut_text(scope_spans.scope.name, limits.max_string_bytes))
            for span in scope_spans.spans:
                record = _record(
                    span, trace_hex, resource, resource_encoded, scope_name, selection, limits
                )
                if isinstance(record, str):
                    errors[record] = errors.get(record, 0) + 1
                else:
                    spans.append(record)
    return DecodedRequest(tuple(spans), sum(errors.values()), errors)


def _record(
    span: Any,
    trace_hex: dict[bytes, str],
    resource: dict[str, Value],
    resource_encoded: bytes,
    scope_name: str,
    selection: Selection,
    limits: Limits,
) -> WireSpan | str:
    """One span as a WireSpan, or why it is refused (docs/otlp.md "Partial success").

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
    if end > _MAX_NS:  # and so is start, or it is after the end
        return "start_time_unix_nano and end_time_unix_nano must be below 2^63"
    kind, status = span.kind, span.status
    code = status.code
    if not 0 <= kind <= _MAX_KIND:
        return f"kind must be a SpanKind (0-{_MAX_KIND})"
    if not 0 <= code <= _MAX_STATUS_CODE:
        return f"status.code must be a StatusCode (0-{_MAX_STATUS_CODE})"
    scanned = _lift(span, selection, limits)
    if scanned is None:
        return f"attribute nested deeper than {limits.max_depth} levels"
    long_key, lifted = scanned
    events, links = span.events, span.links
    has_extras = bool(events) or bool(links)
    if has_extras and any(
        too_deep(item.attributes, limits.max_depth) for item in (*events, *links)
    ):
        return f"attribute nested deeper than {limits.max_depth} levels"
    trace = trace_hex.get(trace_id)
    if trace is None:
        trace = trace_hex[trace_id] = trace_id.hex()
    # Encoded first: the limits then hold for the lifted events too.
    encoded = (
        _encode(span, limits, events, links, long_key)
        if has_extras or long_key
        else _plain(span, limits)
    )
    return WireSpan(
        trace,
        span_id.hex(),
        parent.hex() if parent and parent != _ZERO_SPAN else "",
        sql_text(span.name),
        kind,
        start,
        end,
        code,
        sql_text(status.message),
        span.flags,
        lifted,
        resource,
        scope_name,
        _selected_events(events, selection.events) if events and selection.events else (),
        encoded,
        resource_encoded,
    )


def _lift(span: Any, selection: Selection, limits: Limits) -> tuple[bool, dict[str, Value]] | None:
    """One pass over the keys: lift wanted values, check nesting and key sizes.

    None = too deep; else whether a key is over the limit, and the lifted values.
    """
    lifted: dict[str, Value] = {}
    keys, prefixes, max_depth = selection.keys, selection.prefixes, limits.max_depth
    markers, tails = selection.markers, selection.marker_tails
    long_key, key_chars = False, limits.max_key_bytes // 4  # a character is <= 4 bytes
    attributes = span.attributes
    for kv in attributes:
        value = kv.value
        text = value.string_value  # "" unless a string: most values are
        if not text:  # a string cannot nest; it needs no WhichOneof (~15% of the pass)
            which = value.WhichOneof("value")
            if which in _NESTED and nesting(value, max_depth) > max_depth:
                return None
        key = kv.key
        if len(key) > key_chars:
            long_key = True
            key = cut_text(key, limits.max_key_bytes)
        if key in keys or (prefixes and key.startswith(prefixes)):
            lifted[key] = sql_text(text) if text else value_of(value, which)
        elif markers and key.startswith(markers):
            for marker in markers:  # the first that matches; no generator per key
                if key.startswith(marker):
                    break
            lifted[marker] = True
            wanted = tails.get(marker) if tails else None
            if wanted and key.endswith(wanted):
                lifted[key] = sql_text(text) if text else value_of(value, which)
    extra = len(attributes) - limits.max_attributes
    if extra > 0:
        del attributes[limits.max_attributes :]
        span.dropped_attributes_count += extra
    return long_key, lifted


def _limit_resource(resource: Any, limits: Limits) -> str | None:
    """The span limits, applied to a resource in place; a reason if it is refused."""
    if too_deep(resource.attributes, limits.max_depth):
        return f"resource attribute nested deeper than {limits.max_depth} levels"
    resource.dropped_attributes_count += limit_attributes(resource.attributes, limits)
    return None


def _plain(span: Any, limits: Limits) -> bytes:
    """The bytes of a span with no events, links or long keys (most spans)."""
    encoded: bytes = span.SerializeToString()
    if len(encoded) > limits.max_string_bytes:  # only a span this big holds a long value
        limit_attributes(span.attributes, limits)
        encoded = span.SerializeToString()
    return encoded


def _encode(span: Any, limits: Limits, events: Any, links: Any, long_key: bool) -> bytes:
    """The span's bytes after the docs/otlp.md limits: events, then every attribute
    list's keys and values (span, events, links)."""
    extra = len(events) - limits.max_events
    if extra > 0:
        del events[limits.max_events :]
        span.dropped_events_count += extra
    encoded: bytes = span.SerializeToString()
    # A long key anywhere makes a span longer than max_key_bytes.
    if long_key or len(encoded) > min(limits.max_string_bytes, limits.max_key_bytes):
        limit_attributes(span.attributes, limits)
        for item in (*events, *links):
            item.dropped_attributes_count += limit_attributes(item.attributes, limits)
        encoded = span.SerializeToString()
    return encoded


def _selected_events(events: Any, names: frozenset[str]) -> tuple[WireEvent, ...]:
    """The events the caller asked for by name, their attributes as Python values."""
    return tuple(
        WireEvent(
            sql_text(event.name),
            event.time_unix_nano,
            {kv.key: _text_safe(to_python(kv.value)) for kv in event.attributes},
        )
        for event in events
        if event.name in names
    )


def _text_safe(value: Value) -> Value:
    """A lifted string holds no NUL (no SQL text column can store one)."""
    return sql_text(value) if isinstance(value, str) else value
