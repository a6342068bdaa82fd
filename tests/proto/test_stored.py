"""proto.decode_stored: stored span bytes give the WireSpans their request gave."""

from __future__ import annotations

import proto
from bench.support.otlp import new_span_id, new_trace_id, request, span

SELECT = proto.Selection(keys=frozenset({"wanted"}), prefixes=("gen_ai.usage.",))


def test_stored_spans_decode_as_their_requests_did_across_resources_and_scopes() -> None:
    trace = new_trace_id()
    first = request(
        [span(trace, new_span_id(), "a", attributes={"wanted": 1, "other": "x" * 100})],
        service="one",
    )
    first.resource_spans[0].scope_spans.add().scope.name = "second-scope"
    first.resource_spans[0].scope_spans[1].spans.append(
        span(trace, new_span_id(), "b", attributes={"gen_ai.usage.input_tokens": 3})
    )
    second = request([span(trace, new_span_id(), "c", attributes={"wanted": "w"})], "two")
    first.MergeFrom(second)
    given = proto.decode_request(first, SELECT, proto.Limits()).spans
    # Stored rows come back in any order: one resource, then another, then the first again.
    order = [given[0], given[2], given[1]]
    stored = [proto.StoredSpan(s.resource_encoded, s.scope_name, s.encoded) for s in order]
    again = proto.decode_stored(stored, SELECT)
    assert [s._replace(resource_encoded=b"") for s in again] == [
        s._replace(resource_encoded=b"") for s in order
    ]
    assert [s.resource for s in again] == [{"service.name": n} for n in ("one", "two", "one")]
    assert [s.attributes for s in again] == [
        {"wanted": 1},
        {"wanted": "w"},
        {"gen_ai.usage.input_tokens": 3},
    ]
