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
from bench.support.otlp import any_value, new_span_id, new_trace_id, request, span
from proto.values import limit_attributes, nesting, to_python
from proto.view import json_value, resource_attributes, span_attributes, span_details

SELECT = proto.Selection(
    keys=frozenset({"wanted"}),
    prefixes=("gen_ai.usage.",),
    events=frozenset({"exception"}),
    markers=("llm.input_messages", "gen_ai.output.messages"),
)


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


def test_markers_say_that_a_span_has_such_keys_without_lifting_their_values() -> None:
    long_text = "m" * 10_000
    s = span(
        new_trace_id(),
        new_span_id(),
        "chat",
        attributes={
            "llm.input_messages.0.message.content": long_text,
            "llm.input_messages.1.message.content": long_text,
            "gen_ai.usage.input_tokens": 3,
        },
    )
    [wire] = decode(request([s])).spans
    assert dict(wire.attributes) == {"llm.input_messages": True, "gen_ai.usage.input_tokens": 3}
    bare = span(new_trace_id(), new_span_id(), "chat", attributes={"other": long_text})
    assert dict(decode(request([bare])).spans[0].attributes) == {}


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
    assert wire.events[0].attributes["exception.type"] == "E\ufffdrr"
    assert wire.resource["badge.agent.id"] == "ag\ufffdent"
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
    [event] = wire.events
    assert event.name == "exception" and event.attributes["exception.type"] == "Boom"
    assert len(str(event.attributes["exception.message"]).encode()) <= 64  # after the limits


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
    nan, inf = float("nan"), float("inf")
    assert json_value({"n": nan, "l": [inf, -inf, 1.5]}) == {
        "n": "NaN",
        "l": ["Infinity", "-Infinity", 1.5],
    }


def test_truncate_leaves_short_values_alone() -> None:
    s = span(new_trace_id(), new_span_id(), "x", attributes={"s": "short", "n": 3})
    assert limit_attributes(s.attributes, proto.Limits(max_string_bytes=10)) == 0
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
    assert span_attributes(wire.encoded) == details["attributes"]  # what certificates digest


def test_responses_in_both_encodings() -> None:
    assert ExportTraceServiceResponse.FromString(proto.PROTOBUF.export_response(0, "")) == (
        ExportTraceServiceResponse()
    )
    partial = json.loads(proto.JSON.export_response(2, "bad ids"))
    assert partial == {"partialSuccess": {"rejectedSpans": "2", "errorMessage": "bad ids"}}
    assert proto.export_response_message(1, "x").partial_success.rejected_spans == 1
    assert status_pb2.Status.FromString(proto.PROTOBUF.status(3, "m")).message == "m"
    assert json.loads(proto.JSON.status(3, "m")) == {"code": 3, "message": "m", "details": []}


@pytest.mark.parametrize(
    ("content_type", "codec"),
    [
        ("application/x-protobuf", proto.PROTOBUF),
        ("Application/JSON; charset=utf-8", proto.JSON),
        ("text/plain", None),
        ("", None),
    ],
)
def test_a_codec_is_chosen_by_media_type_alone(
    content_type: str, codec: proto.Codec | None
) -> None:
    assert proto.codec_for(content_type) is codec


def test_a_whole_body_decodes_through_its_codec_and_gzip() -> None:
    body = request([span(new_trace_id(), new_span_id(), "one")]).SerializeToString()
    for gzipped, data in ((False, body), (True, gzip.compress(body))):
        decoded = proto.decode_body(
            data,
            "protobuf",
            gzip=gzipped,
            max_bytes=1 << 20,
            selection=SELECT,
            limits=proto.Limits(),
        )
        assert len(decoded.spans) == 1
    with pytest.raises(proto.TooLarge):
        proto.decode_body(
            gzip.compress(body),
            "protobuf",
            gzip=True,
            max_bytes=10,
            selection=SELECT,
            limits=proto.Limits(),
        )


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512), st.sampled_from(["protobuf", "json"]))
def test_fuzz_arbitrary_bytes_decode_or_fail_cleanly(body: bytes, content: str) -> None:
    try:
        message = proto.parse_request(body, content)
    except proto.DecodeError:
        return
    result = proto.decode_request(message, SELECT, proto.Limits())
    sent = sum(len(ss.spans) for rs in message.resource_spans for ss in rs.scope_spans)
    assert result.rejected + len(result.spans) == sent  # each span kept or refused, once
    assert len(result.errors) <= result.rejected
    for wire in result.spans:  # what was kept passed every check
        assert len(wire.trace_id) == 32 and wire.trace_id != "0" * 32
        assert len(wire.span_id) == 16 and wire.span_id != "0" * 16
        assert len(wire.parent_span_id) in (0, 16)
        assert 0 <= wire.start_ns <= wire.end_ns < 1 << 63
        assert 0 <= wire.kind <= 5 and 0 <= wire.status_code <= 2
        assert "\x00" not in wire.name and "\x00" not in wire.scope_name


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


def test_timestamps_must_fit_a_signed_64_bit_integer() -> None:
    trace_id = new_trace_id()
    late_start = span(trace_id, new_span_id(), "late start", start=1 << 63, end=1 << 63)
    late_end = span(trace_id, new_span_id(), "late end", end=(1 << 64) - 1)
    last = span(trace_id, new_span_id(), "last", start=(1 << 63) - 2, end=(1 << 63) - 1)
    result = decode(request([late_start, late_end, last]))
    assert [s.name for s in result.spans] == ["last"] and result.rejected == 2
    assert result.error_message == "2 span(s): start_time_unix_nano and " + (
        "end_time_unix_nano must be below 2^63"
    )


def test_kind_and_status_code_must_be_otlp_enum_values() -> None:
    trace_id = new_trace_id()
    kinds = [span(trace_id, new_span_id(), f"kind {k}") for k in (0, 5, 6)]
    for s, k in zip(kinds, (0, 5, 6), strict=True):
        s.kind = k
    codes = [span(trace_id, new_span_id(), f"code {c}", status=c) for c in (2, 3)]
    result = decode(request([*kinds, *codes]))
    assert [s.name for s in result.spans] == ["kind 0", "kind 5", "code 2"]
    assert "kind must be a SpanKind (0-5)" in result.error_message
    assert "status.code must be a StatusCode (0-2)" in result.error_message


def test_keys_are_cut_in_span_event_link_and_resource_attributes() -> None:
    long_key = "é" * 200  # 400 bytes of UTF-8
    trace_id = new_trace_id()
    s = span(
        trace_id,
        new_span_id(),
        "x",
        attributes={long_key: 1, "gen_ai.usage." + "x" * 300: 5},
        events=[("e", {long_key: "v"})],
    )
    s.links.add(trace_id=trace_id, span_id=new_span_id()).attributes.add(key=long_key)
    [wire] = decode(request([s], resource={long_key: "r"})).spans
    stored = Span.FromString(wire.encoded)
    cut = "é" * 128  # 256 bytes
    assert [kv.key for kv in stored.attributes][0] == cut
    assert all(len(kv.key.encode()) <= 256 for kv in stored.attributes)
    assert stored.events[0].attributes[0].key == cut
    assert stored.links[0].attributes[0].key == cut
    assert cut in wire.resource and cut in resource_attributes(wire.resource_encoded)
    # a lifted key is matched after the cut, so a prefix match keeps a short key
    assert all(len(key.encode()) <= 256 for key in wire.attributes)


def test_small_spans_with_events_still_have_their_long_keys_cut() -> None:
    s = span(new_trace_id(), new_span_id(), "x", events=[("e", {"k" * 300: 1})])
    [wire] = decode(request([s])).spans
    assert Span.FromString(wire.encoded).events[0].attributes[0].key == "k" * 256


def test_bytes_values_and_event_and_link_attribute_lists_obey_the_limits() -> None:
    trace_id = new_trace_id()
    s = span(
        trace_id,
        new_span_id(),
        "x",
        attributes={"blob": b"\x01" * 100, "arr": [b"\x02" * 100]},
        events=[("e", {f"a{i}": i for i in range(6)})],
    )
    link = s.links.add(trace_id=trace_id, span_id=new_span_id())
    for i in range(6):
        link.attributes.add(key=f"l{i}").value.int_value = i
    limits = proto.Limits(max_attributes=4, max_string_bytes=64)
    [wire] = decode(request([s]), limits).spans
    stored = Span.FromString(wire.encoded)
    values = {kv.key: kv.value for kv in stored.attributes}
    assert values["blob"].bytes_value == b"\x01" * 64
    assert values["arr"].array_value.values[0].bytes_value == b"\x02" * 64
    assert (len(stored.events[0].attributes), stored.events[0].dropped_attributes_count) == (4, 2)
    assert (len(stored.links[0].attributes), stored.links[0].dropped_attributes_count) == (4, 2)


def test_resource_attributes_obey_the_span_limits() -> None:
    message = request(
        [span(new_trace_id(), new_span_id(), "x")],
        resource={"big": "r" * 200, "kv": {"in": "s" * 200}, **{f"r{i}": i for i in range(10)}},
    )
    [wire] = decode(message, proto.Limits(max_attributes=4, max_string_bytes=64)).spans
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    resource = Resource.FromString(wire.resource_encoded)
    assert [kv.key for kv in resource.attributes] == ["service.name", "big", "kv", "r0"]
    assert resource.dropped_attributes_count == 9
    assert wire.resource["big"] == "r" * 64 and wire.resource["kv"] == {"in": "s" * 64}


def test_a_scope_name_is_cut_like_a_string_value() -> None:
    message = request([span(new_trace_id(), new_span_id(), "x")])
    message.resource_spans[0].scope_spans[0].scope.name = "é" * 100
    [wire] = decode(message, proto.Limits(max_string_bytes=51)).spans
    assert wire.scope_name == "é" * 25


def test_deep_values_refuse_their_span_and_a_deep_resource_refuses_its_spans() -> None:
    trace_id = new_trace_id()
    deep = [[[[[[[[[1]]]]]]]]]
    in_event = span(trace_id, new_span_id(), "event", events=[("e", {"d": deep})])
    in_link = span(trace_id, new_span_id(), "link")
    in_link.links.add(trace_id=trace_id, span_id=new_span_id()).attributes.extend(
        request([], resource={"d": deep}).resource_spans[0].resource.attributes[1:]
    )
    fine = span(trace_id, new_span_id(), "fine")
    result = decode(request([in_event, in_link, fine]))
    assert [s.name for s in result.spans] == ["fine"] and result.rejected == 2
    bad_resource = request([span(trace_id, new_span_id(), "a"), span(trace_id, new_span_id(), "b")])
    bad_resource.resource_spans[0].resource.attributes.add(key="d").value.CopyFrom(any_value(deep))
    bad_resource.resource_spans.add()  # a resource with no spans refuses nothing
    bad_resource.resource_spans[1].resource.attributes.add(key="d").value.CopyFrom(any_value(deep))
    refused = decode(bad_resource)
    assert refused.spans == () and refused.rejected == 2
    assert refused.error_message == "2 span(s): resource attribute nested deeper than 8 levels"


def test_nesting_is_counted_without_recursion_and_stops_past_the_limit() -> None:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    value = AnyValue(int_value=1)
    for _ in range(90):  # protobuf's own parse limit is 100
        outer = AnyValue()
        outer.array_value.values.add().CopyFrom(value)
        value = outer
    assert nesting(value) == 90
    assert nesting(value, stop_after=8) == 9
    assert nesting(any_value({"a": [1, {"b": []}]})) == 4  # kvlist, array, kvlist, array


@pytest.mark.parametrize(
    "body",
    [
        b'{"\\ud800": 1}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "\\udc00"}]}]}]}',
        # the same surrogates raw (3-byte, invalid UTF-8): json.loads lets them
        # through and upb failed with a SystemError (found by bench/fuzz.py)
        b'{"resourceSpans": [{"scopeSpans": [{"scope": "\xed\xa0\x80x"}]}]}',
        b'{"\xed\xbf\xbf": 1}',
        # an enum as Infinity: json_format's int(inf) raised OverflowError (bench/fuzz.py)
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": Infinity}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"status": {"code": -Infinity}}]}]}]}',
        b"[" * 5_000 + b"]" * 5_000,
        b'{"a": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",
        b"1" * 5_000,
    ],
)
def test_hostile_json_is_a_short_decode_error(body: bytes) -> None:
    with pytest.raises(proto.DecodeError) as info:
        proto.parse_request(body, "json")
    assert len(str(info.value)) < 300


def test_paired_surrogates_are_fine_and_deep_protobuf_json_is_refused_briefly() -> None:
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "\ud83d\ude00"}]}]}]}
    escaped = json.dumps(body).encode()  # ensure_ascii: "\\ud83d\\ude00"
    assert b"\\ud83d" in escaped
    assert proto.parse_request(escaped, "json").resource_spans[0].scope_spans[0].spans[0].name
    value: dict[str, Any] = {"intValue": 1}
    for _ in range(120):
        value = {"arrayValue": {"values": [value]}}
    deep = {"resourceSpans": [{"resource": {"attributes": [{"key": "a", "value": value}]}}]}
    with pytest.raises(proto.DecodeError) as info:
        proto.parse_request(json.dumps(deep).encode(), "json")
    assert str(info.value).endswith("...") and len(str(info.value)) < 300
