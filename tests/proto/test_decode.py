"""proto/: decoding, limits, OTLP/JSON quirks, value conversion, responses."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest
from google.rpc import status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

import proto
from proto.responses import export_response, export_response_message, status_body
from proto.values import nesting, to_python, truncate_strings
from proto.view import json_value, resource_attributes, span_details
from tests.otlp_builders import any_value, new_span_id, new_trace_id, request, span

SELECT = proto.Selection(keys=frozenset({"wanted"}), prefixes=("gen_ai.usage.",))


def decode(message: Any, limits: proto.Limits | None = None) -> proto.DecodedRequest:
    return proto.decode_request(message, SELECT, limits or proto.Limits())


def test_lifts_only_selected_keys_and_keeps_the_rest_encoded() -> None:
    s = span(
        new_trace_id(),
        new_span_id(),
        "x",
        attributes={"wanted": 1, "gen_ai.usage.input_tokens": 5, "other": "o"},
    )
    result = decode(request([s], resource={"badge.agent.id": "a"}))
    [wire] = result.spans
    assert dict(wire.attributes) == {"wanted": 1, "gen_ai.usage.input_tokens": 5}
    assert wire.resource["badge.agent.id"] == "a"
    assert len(Span.FromString(wire.encoded).attributes) == 3
    assert result.rejected == 0 and result.error_message == ""


def test_nul_in_lifted_text_becomes_replacement_character_but_stays_encoded() -> None:
    s = span(
        new_trace_id(),
        new_span_id(),
        "a\x00b",
        attributes={"wanted": "x\x00y"},
        events=[("exception", {"exception.type": "E\x00rr"})],
    )
    s.status.message = "m\x00"
    message = request([s], resource={"badge.agent.id": "ag\x00ent"})
    message.resource_spans[0].scope_spans[0].scope.name = "sc\x00ope"
    [wire] = decode(message).spans
    assert wire.name == "a\ufffdb" and wire.status_message == "m\ufffd"
    assert wire.scope_name == "sc\ufffdope" and wire.attributes["wanted"] == "x\ufffdy"
    assert wire.exception_type == "E\ufffdrr" and wire.resource["badge.agent.id"] == "ag\ufffdent"
    assert Span.FromString(wire.encoded).name == "a\x00b"


def test_parent_of_wrong_length_and_all_zero_parent() -> None:
    trace_id = new_trace_id()
    bad = span(trace_id, new_span_id(), "bad", parent=b"\x01\x02")
    zero = span(trace_id, new_span_id(), "zero-parent", parent=b"\0" * 8)
    result = decode(request([bad, zero]))
    assert result.rejected == 1
    assert "parent_span_id" in result.error_message
    assert result.spans[0].parent_span_id == ""


def test_attribute_and_event_limits_drop_and_count() -> None:
    s = span(
        new_trace_id(),
        new_span_id(),
        "x",
        attributes={f"k{i}": i for i in range(10)},
        events=[("e", {}) for _ in range(5)],
    )
    limits = proto.Limits(max_attributes=4, max_events=2)
    [wire] = decode(request([s]), limits).spans
    stored = Span.FromString(wire.encoded)
    assert (len(stored.attributes), stored.dropped_attributes_count) == (4, 6)
    assert (len(stored.events), stored.dropped_events_count) == (2, 3)


def test_long_strings_are_truncated_also_inside_arrays_lists_and_events() -> None:
    long = "é" * 100  # 200 bytes of UTF-8
    s = span(
        new_trace_id(),
        new_span_id(),
        "x",
        attributes={"s": long, "arr": [long], "kv": {"in": long}, "n": 1},
        events=[("exception", {"exception.type": "Boom", "exception.message": long})],
    )
    [wire] = decode(request([s]), proto.Limits(max_string_bytes=64)).spans
    stored = Span.FromString(wire.encoded)
    values = {kv.key: kv.value for kv in stored.attributes}
    assert len(values["s"].string_value.encode()) <= 64
    assert len(values["arr"].array_value.values[0].string_value.encode()) <= 64
    assert len(values["kv"].kvlist_value.values[0].value.string_value.encode()) <= 64
    assert wire.exception_type == "Boom"


def test_too_many_spans_is_too_large() -> None:
    trace_id = new_trace_id()
    with pytest.raises(proto.TooLarge):
        decode(
            request([span(trace_id, new_span_id(), "x") for _ in range(3)]),
            proto.Limits(max_spans=2),
        )


def test_gzip_multi_member_truncated_and_bomb() -> None:
    assert proto.gunzip_limited(gzip.compress(b"ab") + gzip.compress(b"cd"), 10) == b"abcd"
    with pytest.raises(proto.DecodeError, match="truncated"):
        proto.gunzip_limited(gzip.compress(b"abcdef" * 100)[:-10], 10_000)
    with pytest.raises(proto.DecodeError, match="broken"):
        proto.gunzip_limited(b"\x1f\x8b\x08\x00garbage-garbage", 10_000)
    with pytest.raises(proto.TooLarge):
        proto.gunzip_limited(gzip.compress(b"\0" * 100_000), 1000)


def test_json_quirks_hex_case_enum_names_int_strings_snake_case() -> None:
    body = {
        "resource_spans": [
            {
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": "5B8EFFF798038103D269B633813FC60C",
                                "span_id": "eee19b7ec3c1b174",
                                "parent_span_id": "EEE19B7EC3C1B175",
                                "name": "s",
                                "kind": "SPAN_KIND_CLIENT",
                                "start_time_unix_nano": "5",
                                "endTimeUnixNano": 6,
                                "status": {"code": "STATUS_CODE_ERROR"},
                                "links": [
                                    {
                                        "traceId": "5b8efff798038103d269b633813fc60c",
                                        "spanId": "00f067aa0ba902b7",
                                    }
                                ],
                                "attributes": [
                                    {
                                        "key": "b",
                                        "value": {"bytesValue": base64.b64encode(b"hi").decode()},
                                    }
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    [wire] = decode(proto.parse_request(json.dumps(body).encode(), "json")).spans
    assert (wire.trace_id, wire.parent_span_id) == (
        "5b8efff798038103d269b633813fc60c",
        "eee19b7ec3c1b175",
    )
    assert (wire.kind, wire.status_code, wire.start_ns, wire.end_ns) == (3, 2, 5, 6)
    assert span_details(wire.encoded)["links"][0]["span_id"] == "00f067aa0ba902b7"


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",
        b'{"resourceSpans": {"not": "a list"}}',
        b'{"resourceSpans": ["not an object"]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": ["span as text"]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
        b"\xff\xfe",
    ],
)
def test_json_that_is_not_otlp_is_a_decode_error(body: bytes) -> None:
    with pytest.raises(proto.DecodeError):
        proto.parse_request(body, "json")


def test_non_string_json_id_rejects_only_that_span() -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {"traceId": 12, "spanId": "eee19b7ec3c1b174", "name": "bad"},
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "name": "good",
                            },
                        ]
                    }
                ]
            }
        ]
    }
    result = decode(proto.parse_request(json.dumps(body).encode(), "json"))
    assert [s.name for s in result.spans] == ["good"] and result.rejected == 1


def test_values_keep_their_otlp_types() -> None:
    raw = {"s": "x", "b": True, "i": 7, "d": 0.5, "y": b"\x01", "a": [1, "two"], "kv": {"k": [1.5]}}
    assert {k: to_python(any_value(v)) for k, v in raw.items()} == raw
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    assert to_python(AnyValue()) is None
    assert nesting(any_value([[[]]])) == 3 and nesting(any_value({"a": {"b": 1}})) == 2
    assert json_value({"y": b"\x01", "l": [b"\x02"]}) == {
        "y": {"bytesValue": "AQ=="},
        "l": [{"bytesValue": "Ag=="}],
    }


def test_truncate_leaves_short_values_alone() -> None:
    s = span(new_trace_id(), new_span_id(), "x", attributes={"s": "short", "n": 3})
    truncate_strings(s.attributes, 10)
    assert s.attributes[0].value.string_value == "short"


def test_view_of_a_stored_span_and_resource() -> None:
    message = request(
        [span(new_trace_id(), new_span_id(), "x", attributes={"k": "v"}, events=[("e", {"a": 1})])],
        service="svc",
    )
    [wire] = decode(message).spans
    details = span_details(wire.encoded)
    assert details["attributes"] == {"k": "v"}
    assert details["events"][0]["attributes"] == {"a": 1}
    assert resource_attributes(wire.resource_encoded) == {"service.name": "svc"}


def test_responses_in_both_encodings() -> None:
    assert ExportTraceServiceResponse.FromString(export_response(0, "", as_json=False)) == (
        ExportTraceServiceResponse()
    )
    partial = json.loads(export_response(2, "bad ids", as_json=True))
    assert partial == {"partialSuccess": {"rejectedSpans": "2", "errorMessage": "bad ids"}}
    assert export_response_message(1, "x").partial_success.rejected_spans == 1
    assert status_pb2.Status.FromString(status_body(3, "m", as_json=False)).message == "m"
    assert json.loads(status_body(3, "m", as_json=True))["code"] == 3


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(["protobuf", "json"]))
def test_fuzz_arbitrary_bytes_decode_or_fail_cleanly(body: bytes, content: str) -> None:
    try:
        message = proto.parse_request(body, content)
    except proto.DecodeError:
        return
    result = proto.decode_request(message, SELECT, proto.Limits())
    assert result.rejected + len(result.spans) >= 0


def test_each_span_check_refuses_only_its_span() -> None:
    trace_id = new_trace_id()
    spans = [
        span(trace_id, new_span_id(), "ok"),
        span(trace_id, b"\0" * 8, "zero span id"),
        span(trace_id, new_span_id(), "backwards", start=10, end=9),
        span(trace_id, new_span_id(), "deep", attributes={"d": [[[[[[[[[1]]]]]]]]]}),
    ]
    result = decode(request(spans))
    assert [s.name for s in result.spans] == ["ok"] and result.rejected == 3


def test_json_empty_and_invalid_hex_ids() -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "eee19b7ec3c1b174",
                                "parentSpanId": "",
                                "name": "root",
                            },
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": "not-hex!",
                                "name": "bad",
                            },
                        ]
                    }
                ]
            }
        ]
    }
    result = decode(proto.parse_request(json.dumps(body).encode(), "json"))
    assert [s.name for s in result.spans] == ["root"] and result.rejected == 1
