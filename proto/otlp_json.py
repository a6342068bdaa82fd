"""OTLP/JSON -> `ExportTraceServiceRequest`, with the quirks of docs/otlp.md.

Ids are hex (any case), not base64 as the generic proto3 JSON mapping says;
enums arrive as integers or names; int64 as strings or numbers; field names in
lowerCamelCase or snake_case; unknown fields are ignored.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from proto.errors import DecodeError

# A one-byte id: decodes fine, then fails the span's id-length check, so a bad
# hex id refuses that span (partial success), not the whole request.
_BAD_ID = base64.b64encode(b"\x00").decode()
_MAX_MESSAGE = 240  # of the cause; the whole message stays under 300
# A surrogate, escaped (most are halves of a pair: ensure_ascii encoders write
# emoji so) or raw: json.loads decodes bytes with "surrogatepass", so the
# 3-byte form of a surrogate (invalid UTF-8) reaches a string too.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def json_to_request(body: bytes) -> Any:
    try:
        data = json.loads(body)
    except RecursionError:
        raise DecodeError("malformed JSON: nested too deeply") from None
    except ValueError as exc:  # bad UTF-8, bad syntax, an integer of too many digits
        raise DecodeError(f"malformed JSON: {_short(exc)}") from None
    if not isinstance(data, dict):
        raise DecodeError("OTLP/JSON body must be a JSON object")
    if _SURROGATE.search(body):
        _refuse_lone_surrogates(data)
    try:
        for resource_spans in _items(data, "resourceSpans", "resource_spans"):
            for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
                for span in _items(scope_spans, "spans", "spans"):
                    _fix_ids(span)
                    for link in _items(span, "links", "links"):
                        _fix_ids(link)
        return json_format.ParseDict(data, ExportTraceServiceRequest(), ignore_unknown_fields=True)
    # protobuf stops at 100 levels itself; RecursionError only in case it did not.
    # OverflowError: an enum given as Infinity (int(inf) in json_format).
    except (
        json_format.ParseError,
        TypeError,
        AttributeError,
        ValueError,
        OverflowError,
        RecursionError,
    ) as exc:
        raise DecodeError(f"invalid OTLP/JSON request: {_short(exc)}") from None


def _short(exc: Exception) -> str:
    """protobuf names every enclosing field of a deep failure: keep the answer short."""
    text = str(exc)
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _refuse_lone_surrogates(data: Any) -> None:
    """An unpaired surrogate ("\\ud800") is valid JSON but no protobuf string
    can hold it, and upb fails on one in a key with a SystemError."""
    try:
        json.dumps(data, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise DecodeError("invalid OTLP/JSON request: unpaired surrogate in a string") from None


def _items(parent: Any, camel: str, snake: str) -> list[Any]:
    if not isinstance(parent, dict):
        raise TypeError("expected a JSON object")
    items = parent.get(camel, parent.get(snake)) or []
    if not isinstance(items, list):
        raise TypeError(f"{camel} must be a list")
    return items


def _fix_ids(record: Any) -> None:
    if not isinstance(record, dict):
        raise TypeError("a span or link must be a JSON object")
    for camel, snake in (
        ("traceId", "trace_id"),
        ("spanId", "span_id"),
        ("parentSpanId", "parent_span_id"),
    ):
        for key in (camel, snake):
            if key in record:
                record[key] = _hex_to_base64(record[key])


def _hex_to_base64(value: Any) -> str:
    if not isinstance(value, str):
        return _BAD_ID
    if not value:
        return ""
    try:
        return base64.b64encode(binascii.unhexlify(value)).decode()
    except (binascii.Error, ValueError):
        return _BAD_ID
