"""The ingest path's steps on their own: the export runners, recognition of
a decoded span, rows built by name, and a decode job's stages in turn."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any

import pytest

import proto
from bench.payloads import build_requests
from bench.support.otlp import new_span_id, new_trace_id, request, span
from collector.conventions import builtin_set, recognise_span
from collector.errors import BadRequest, Internal, Overloaded, answer_for
from collector.ingest.decoding import STAGES, DecodeJob, decode_job, recognising
from collector.ingest.export import Export, Outcome, Wire, run_async, run_blocking
from collector.storage.rows import SPAN_COLUMNS, SpanRow, row_builder
from collector.storage.span_rows import Sender, span_row_for

SENDER = Sender(owner="o", grader=False, received_at=1_790_000_000.0, key_id=7)


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _failed(error: Exception) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(error)
    return future


def _export(first: Future[Any], second: Future[Any]) -> Export:
    """Two waits, as Ingest.export has (rows, then the commit)."""
    try:
        rows = yield first
        yield second
    except Overloaded as error:
        return Outcome(proto.PROTOBUF, error=error)
    return Outcome(proto.PROTOBUF, accepted=rows)


@pytest.mark.parametrize("runner", ["blocking", "async"])
def test_both_runners_drive_an_export_to_the_same_outcome(runner: str) -> None:
    def run(export: Export) -> Outcome:
        return run_blocking(export) if runner == "blocking" else asyncio.run(run_async(export))

    assert run(_export(_done(3), _done(None))) == Outcome(proto.PROTOBUF, accepted=3)
    refused = run(_export(_done(3), _failed(Overloaded("busy"))))
    assert refused.kind == "overloaded" and refused.accepted == 0


def test_an_unexpected_error_answers_internal_through_the_one_table() -> None:
    answer = answer_for(Internal())
    assert (answer.http_status, answer.retryable) == (500, False)
    assert Internal().message == "internal error; the collector logged it"


def test_a_wire_keeps_the_codec_its_request_was_sent_in() -> None:
    wire = Wire(proto.JSON, gzip=True)
    assert wire.codec.name == "json" and Outcome(wire.codec).kind == "ok"


def _decoded_span(**attributes: Any) -> proto.WireSpan:
    body = request([span(new_trace_id(), new_span_id(), "tool call", attributes=attributes)])
    selection = recognising(builtin_set()).selection
    [wire] = proto.decode_request(body, selection, proto.Limits()).spans
    return wire


def test_a_decoded_span_is_recognised_by_the_built_in_conventions_by_default() -> None:
    wire = _decoded_span(**{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"})
    found = recognise_span(wire)
    assert found == recognise_span(wire, builtin_set())
    assert (found.role, found.tool_name) == ("tool", "grep")


def test_a_span_row_takes_each_column_by_name() -> None:
    wire = _decoded_span(**{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep"})
    found = recognise_span(wire)
    row = span_row_for(wire, SENDER, "agent-1", b"d" * 16, found, '{"x":1}')
    assert row._fields == SPAN_COLUMNS
    assert (row.owner, row.trace_id, row.span_id, row.name) == (
        "o",
        wire.trace_id,
        wire.span_id,
        "tool call",
    )
    assert (row.agent_id, row.resource_digest, row.role, row.rule) == (
        "agent-1",
        b"d" * 16,
        "tool",
        found.label,
    )
    assert (row.encoded, row.facts, row.key_id, row.grader) == (wire.encoded, '{"x":1}', 7, False)


def test_a_decode_job_runs_its_steps_in_turn_and_times_each() -> None:
    [body] = build_requests(1)
    job = DecodeJob(body, "protobuf", False, 16 << 20, proto.Limits(), SENDER)
    decoded = decode_job(job, recognising(builtin_set()))
    assert len(decoded.rows) == 512 and decoded.rejected == 0
    assert set(decoded.cpu_s) == set(STAGES) and all(s >= 0 for s in decoded.cpu_s.values())
    assert {row.trace_id for row in decoded.rows} == set(decoded.runs)
    assert set(decoded.agents) == {row.agent_id for row in decoded.rows}


def test_a_body_the_codec_cannot_read_is_a_bad_request() -> None:
    job = DecodeJob(b"\xff\xff", "protobuf", False, 1 << 20, proto.Limits(), SENDER)
    with pytest.raises(BadRequest):
        decode_job(job, recognising(builtin_set()))


def test_a_row_builder_refuses_a_column_left_unnamed_or_a_name_of_no_column() -> None:
    values = {name: "x" for name in SPAN_COLUMNS}
    build = row_builder(SpanRow, "x", values)
    assert build(1) == SpanRow(*([1] * len(SPAN_COLUMNS)))
    with pytest.raises(TypeError, match="no value for {'owner'}"):
        row_builder(SpanRow, "x", {k: v for k, v in values.items() if k != "owner"})
    with pytest.raises(TypeError, match="no field {'colour'}"):
        row_builder(SpanRow, "x", {**values, "colour": "x"})
