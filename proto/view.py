"""Stored span bytes -> a JSON-ready view for `/runs/{id}/trace`.

Attribute values keep their OTLP types: bytes are shown as `{"bytesValue":
base64}` so they are not confused with strings. A NaN or infinite double is
shown as "NaN", "Infinity" or "-Infinity", as the protobuf JSON mapping
spells them: JSON has no such numbers, and the response would otherwise
show null, a value the span never held.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from proto.spans import Value
from proto.values import attributes_to_python


def json_value(value: Value) -> Any:
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def span_attributes(encoded: bytes) -> dict[str, Any]:
    """The attributes of one stored span alone, JSON-ready (a run certificate's
    spans digest reads nothing else of the span's bytes)."""
    attributes: dict[str, Any] = json_value(
        attributes_to_python(Span.FromString(encoded).attributes)
    )
    return attributes


def span_details(encoded: bytes) -> dict[str, Any]:
    """Attributes, events, links and dropped counts of one stored span."""
    span = Span.FromString(encoded)
    return {
        "attributes": json_value(attributes_to_python(span.attributes)),
        "dropped_attributes_count": span.dropped_attributes_count,
        "events": [
            {
                "name": event.name,
                "time_unix_nano": event.time_unix_nano,
                "attributes": json_value(attributes_to_python(event.attributes)),
            }
            for event in span.events
        ],
        "dropped_events_count": span.dropped_events_count,
        "links": [
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "attributes": json_value(attributes_to_python(link.attributes)),
            }
            for link in span.links
        ],
    }


def resource_attributes(encoded: bytes) -> dict[str, Any]:
    resource = Resource.FromString(encoded)
    result: dict[str, Any] = json_value(attributes_to_python(resource.attributes))
    return result
