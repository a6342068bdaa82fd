"""Stored span bytes -> `WireSpan`s again, as a request would have given them.

A stored span keeps its encoded bytes (after the docs/otlp.md limits), its
resource's bytes and its scope's name: enough to lift the attributes a new
selection wants through the very `decode_request` ingest uses, when the
rules that read them change (the collector's reclassification).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from proto.decode import decode_request
from proto.spans import Limits, Selection, WireSpan

# The stored bytes are within the limits they were stored under; decoding
# them again must cut nothing more, whatever those limits were.
_NO_LIMITS = Limits(
    max_attributes=1 << 30,
    max_events=1 << 30,
    max_string_bytes=1 << 40,
    max_key_bytes=1 << 40,
    max_depth=1 << 20,
    max_spans=1 << 40,
)


class StoredSpan(NamedTuple):
    """What is kept of one span: its resource's bytes, its scope's name, its bytes."""

    resource: bytes
    scope_name: str
    encoded: bytes


def decode_stored(spans: Sequence[StoredSpan], selection: Selection) -> tuple[WireSpan, ...]:
    """The spans as `decode_request` gives them, in the order given; spans of
    one resource and scope in a row share one ResourceSpans / ScopeSpans, as
    an exporter's request has them."""
    request = ExportTraceServiceRequest()
    last_resource: bytes | None = None
    last_scope: str | None = None
    scope_spans: ScopeSpans | None = None
    resource_spans: ResourceSpans | None = None
    for resource, scope_name, encoded in spans:
        if resource_spans is None or resource != last_resource:
            resource_spans = request.resource_spans.add()
            resource_spans.resource.CopyFrom(Resource.FromString(resource))
            last_resource, scope_spans = resource, None
        if scope_spans is None or scope_name != last_scope:
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.name = scope_name
            last_scope = scope_name
        scope_spans.spans.append(Span.FromString(encoded))
    return decode_request(request, selection, _NO_LIMITS).spans
