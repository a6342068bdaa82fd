"""Mutated OTLP export bodies for the fuzzer (bench/fuzz.py, test_fuzz.py).

A mutation fuzzer seeded from the recorded framework payloads
(tests/fixtures/corpus) and a few hand-built requests, in both encodings.
Each input is one seed changed one to four times, by a mutator that knows
the format it breaks:

- bytes: bit flips, interesting bytes, cut/duplicated/inserted ranges,
  splices of two seeds, huge varints written anywhere;
- protobuf: a field of the wire format (at any depth) dropped, repeated,
  given a lying length, another wire type, an extreme varint, or nested
  thousands deep;
- OTLP/JSON: a node of the tree replaced by a hostile value (NaN, 2^64,
  wrong-length or non-hex ids, NUL, lone surrogates, 20,000-deep arrays,
  1 MB strings), deleted, or duplicated;
- structure (a third of inputs): a valid request whose spans are their own
  or each other's parents, share ids, swap times, or carry the attributes run
  assembly reads with values of every type, so it reaches classification,
  assembly, the writer and the reads;
- gzip: the result compressed (a quarter of inputs), then perhaps given a
  lying header or trailer, cut, or followed by another member.

Everything is drawn from one `random.Random`, so a seed and an index name an
input exactly; no input depends on the server's answers.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import random
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from bench.support.otlp import new_span_id, new_trace_id, request, span
from collector.assembly.attributes import ENGINE_KEYS
from collector.conventions import builtin_set

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "corpus"
PROTOBUF, JSON = "protobuf", "json"
ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def selected_keys() -> list[str]:
    """What recognition (the built-in conventions) and assembly read."""
    return sorted(ENGINE_KEYS | builtin_set().keys)


class Case(NamedTuple):
    """One export as a door receives it."""

    door: str  # "http" or "grpc" (gRPC carries protobuf only)
    content: str  # PROTOBUF or JSON
    gzip: bool  # HTTP: content-encoding gzip; gRPC: the channel's gzip compression
    body: bytes


def seed_messages() -> list[ExportTraceServiceRequest]:
    """The recorded requests cut into requests of a few spans each (every
    span shape the frameworks send, in bodies small enough to try thousands
    a second), plus a hand-built one."""
    return [piece for message in whole_messages() for piece in pieces(message, 3)]


def pieces(message: ExportTraceServiceRequest, size: int) -> list[ExportTraceServiceRequest]:
    cut = []
    for resource_spans in message.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for at in range(0, len(scope_spans.spans), size):
                piece = ExportTraceServiceRequest()
                into = piece.resource_spans.add()
                into.resource.CopyFrom(resource_spans.resource)
                into.schema_url = resource_spans.schema_url
                scope = into.scope_spans.add()
                scope.scope.CopyFrom(scope_spans.scope)
                scope.spans.extend(scope_spans.spans[at : at + size])
                cut.append(piece)
    return cut


def whole_messages() -> list[ExportTraceServiceRequest]:
    """Every recorded request (as messages), plus a small hand-built one."""
    messages = []
    for path in sorted(CORPUS.glob("*/payloads/*.bin")):
        meta = json.loads(path.with_suffix("").with_suffix(".meta.json").read_text())
        body = path.read_bytes()
        if (meta.get("content_encoding") or "") == "gzip":
            body = gzip.decompress(body)
        message = ExportTraceServiceRequest()
        if "json" in (meta.get("content_type") or ""):
            message = json_to_message(body)
        else:
            message.ParseFromString(body)
        messages.append(message)
    trace = new_trace_id()
    root = new_span_id()
    messages.append(
        request(
            [
                span(trace, root, "badge.run", attributes={"badge.task.id": "t1"}),
                span(
                    trace,
                    new_span_id(),
                    "execute_tool lookup",
                    parent=root,
                    attributes={"gen_ai.operation.name": "execute_tool", "n": [1, 2.5, True]},
                    events=[("exception", {"exception.type": "ValueError"})],
                ),
            ],
            service="fuzzed",
            resource={"deployment.environment": "fuzz", "tags": ["a", "b"]},
        )
    )
    return messages


def json_to_message(body: bytes) -> ExportTraceServiceRequest:
    """OTLP/JSON (hex ids) -> message, for seeds recorded as JSON."""
    tree = json.loads(body)
    _walk_ids(tree, lambda value: base64.b64encode(bytes.fromhex(value)).decode())
    message = ExportTraceServiceRequest()
    ParseDict(tree, message, ignore_unknown_fields=True)
    return message


def message_to_json(message: ExportTraceServiceRequest) -> Any:
    """Message -> the OTLP/JSON tree (hex ids, as OTLP/HTTP specifies)."""
    tree = MessageToDict(message)
    _walk_ids(tree, lambda value: base64.b64decode(value).hex())
    return tree


def _walk_ids(node: Any, convert: Callable[[str], str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_FIELDS and isinstance(value, str):
                node[key] = convert(value)
            else:
                _walk_ids(value, convert)
    elif isinstance(node, list):
        for item in node:
            _walk_ids(item, convert)


# --- bytes --------------------------------------------------------------------

INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x22, 0x2A, 0x08)
EXTREME_INTS = (0, 1, 2**31 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1)


def _scale(rng: random.Random, small: tuple[int, ...], large: tuple[int, ...]) -> int:
    """A count or size: one of `large` for 1 input in 50, else one of `small`.
    Large ones cost the server (and this generator) a thousand times more;
    they have their own tests (test_hostile_inputs.py), so here they are rare."""
    return rng.choice(large if rng.random() < 0.02 else small)


def varint(value: int) -> bytes:
    out = bytearray()
    value &= 2**64 - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def mutate_bytes(rng: random.Random, data: bytes, other: bytes) -> bytes:
    buf = bytearray(data)
    choice = rng.randrange(8)
    if not buf:
        return bytes(rng.randbytes(rng.randrange(1, 64)))
    at = rng.randrange(len(buf))
    if choice == 0:
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif choice == 1:
        buf[at] = rng.choice(INTERESTING_BYTES)
    elif choice == 2:
        del buf[at : at + rng.randint(1, 64)]
    elif choice == 3:
        piece = buf[at : at + rng.randint(1, 256)]
        buf[at:at] = piece * rng.randint(1, 8)
    elif choice == 4:
        buf[at:at] = rng.randbytes(rng.randint(1, 32))
    elif choice == 5:
        del buf[rng.randrange(len(buf) + 1) :]
    elif choice == 6 and other:
        cut = rng.randrange(len(other))
        buf = buf[:at] + bytearray(other[cut : cut + rng.randint(1, 4096)])
    else:
        buf[at:at] = varint(rng.choice(EXTREME_INTS))
    return bytes(buf)


# --- protobuf -----------------------------------------------------------------


class Field(NamedTuple):
    number: int
    wire: int
    start: int  # the tag's first byte
    value_start: int
    end: int


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if not byte & 0x80:
            return value, at


def fields_of(data: bytes) -> list[Field]:
    """The wire fields of one message level; ValueError if it is not one."""
    fields, at = [], 0
    while at < len(data):
        tag, value_start = read_varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, end = read_varint(data, value_start)
        elif wire == 1:
            end = value_start + 8
        elif wire == 5:
            end = value_start + 4
        elif wire == 2:
            length, value_start = read_varint(data, value_start)
            end = value_start + length
        else:
            raise ValueError("group or invalid wire type")
        if number == 0 or end > len(data):
            raise ValueError("bad field")
        fields.append(Field(number, wire, at, value_start, end))
        at = end
    return fields


def mutate_protobuf(rng: random.Random, data: bytes, depth: int = 0) -> bytes:
    """Change one field somewhere in the message tree (bytes if unparsable)."""
    try:
        fields = fields_of(data)
    except ValueError:
        return mutate_bytes(rng, data, b"")
    if not fields:
        return varint(rng.randrange(1, 20) << 3 | rng.choice((0, 2))) + varint(
            rng.choice(EXTREME_INTS)
        )
    field = rng.choice(fields)
    head, whole, tail = data[: field.start], data[field.start : field.end], data[field.end :]
    inner = data[field.value_start : field.end]
    tag = varint(field.number << 3 | field.wire)
    if field.wire == 2 and inner and depth < 12 and rng.random() < 0.6:
        changed = mutate_protobuf(rng, inner, depth + 1)
        return head + tag + varint(len(changed)) + changed + tail
    choice = rng.randrange(7)
    if choice == 0:
        return head + tail
    if choice == 1:
        return head + whole * _scale(rng, (2, 3), (100, 2000)) + tail
    if choice == 2 and field.wire == 2:  # a length that lies
        lie = rng.choice((0, 1, len(inner) + 1, len(inner) * 2, 2**31, 2**63))
        return head + tag + varint(lie) + inner + tail
    if choice == 3:  # another wire type
        other = varint(field.number << 3 | rng.choice((0, 1, 2, 3, 4, 5, 6, 7)))
        return head + other + data[field.value_start : field.end] + tail
    if choice == 4:
        return head + tag + _value_of(rng, field.wire) + tail
    if choice == 5 and field.wire == 2:  # nested thousands deep: the field inside itself
        prefixes, size = [], len(whole)
        for _ in range(_scale(rng, (50, 120), (500, 5000))):
            prefix = tag + varint(size)
            prefixes.append(prefix)
            size += len(prefix)
        return head + b"".join(reversed(prefixes)) + whole + tail
    return head + varint(rng.randrange(1, 2**29) << 3 | 2) + varint(3) + b"abc" + whole + tail


def _value_of(rng: random.Random, wire: int) -> bytes:
    if wire == 0:
        return varint(rng.choice(EXTREME_INTS))
    if wire == 1:
        return struct.pack("<d", rng.choice((float("nan"), float("inf"), -0.0, 1e308)))
    if wire == 5:
        return struct.pack("<I", rng.getrandbits(32))
    value = rng.choice((b"", b"\x00" * 16, b"\xff\xfe", rng.randbytes(rng.randrange(40))))
    return varint(len(value)) + value


# --- OTLP/JSON ----------------------------------------------------------------


def _hostile_json(rng: random.Random) -> Any:
    choice = rng.randrange(16)
    return [
        lambda: None,
        lambda: True,
        lambda: -1,
        lambda: 2**64,
        lambda: -(2**63) - 1,
        lambda: "18446744073709551616",
        lambda: float(rng.choice(("nan", "inf", "-inf"))),
        lambda: "",
        lambda: "\x00" * rng.randint(1, 8),
        lambda: "\ud800x",
        lambda: rng.randbytes(rng.choice((1, 7, 8, 15, 16, 17, 32))).hex(),
        lambda: "zz" * rng.choice((8, 16)),
        lambda: f"{DEEP}{_scale(rng, (50, 120), (2000, 20000))}:{rng.randrange(2)}",
        lambda: "x" * _scale(rng, (1024, 4096), (70_000, 1_000_000)),
        lambda: {"stringValue": "v", "intValue": "9" * 30},
        lambda: [{} for _ in range(_scale(rng, (1, 100), (10_000,)))],
    ][choice]()


DEEP = "\u0001deep:"  # a placeholder: json.dumps recurses, so deep nests are spliced in as text


def _deep(match: re.Match[str]) -> str:
    depth, arrays = int(match.group(1)), match.group(2) == "1"
    if arrays:
        return "[" * depth + '"x"' + "]" * depth
    opening = '{"kvlistValue":{"values":[{"key":"k","value":'
    return opening * depth + '{"stringValue":"x"}' + "}]}}" * depth


def _pick_node(rng: random.Random, tree: Any) -> tuple[Any, Any] | None:
    """(container, key) of a node found by a random walk down from the root:
    each level is as likely a stop as the attribute values deep inside."""
    node, picked = tree, None
    while isinstance(node, dict | list) and node:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        picked = (node, key)
        if rng.random() < 0.2:
            break
        node = node[key]
    return picked


def mutate_json(rng: random.Random, body: bytes) -> bytes:
    try:
        tree = json.loads(body)
    except (ValueError, RecursionError):
        return mutate_bytes(rng, body, b"")
    picked = _pick_node(rng, tree)
    if picked is None:
        return json.dumps(_hostile_json(rng)).encode()
    container, key = picked
    choice = rng.randrange(4)
    if choice == 0 or (choice == 1 and isinstance(container, list)):
        container[key] = _hostile_json(rng)
    elif choice == 1:
        del container[key]
    elif choice == 2 and isinstance(container, list):
        container.extend([container[key]] * _scale(rng, (1, 10), (1000,)))
    else:
        container[key] = rng.choice((str(container[key]), [container[key]], {"x": 1}))
    text = json.dumps(tree, ensure_ascii=rng.random() < 0.5, allow_nan=True)
    text = re.sub(r'"\\u0001deep:(\d+):(\d)"', _deep, text)
    return text.encode("utf-8", "surrogatepass")


# --- gzip ---------------------------------------------------------------------


def wrap_gzip(rng: random.Random, body: bytes) -> bytes:
    packed = bytearray(gzip.compress(body, compresslevel=1, mtime=0))
    choice = rng.randrange(8)
    if choice == 0:  # a header that lies: flags, method, or extra fields
        packed[rng.choice((2, 3, 8, 9))] = rng.getrandbits(8)
    elif choice == 1:  # a trailer that lies: CRC or size
        packed[-rng.randint(1, 8)] ^= 0xFF
    elif choice == 2:
        del packed[rng.randrange(10, len(packed)) :]
    elif choice == 3:  # a second member (valid or not)
        packed += gzip.compress(rng.randbytes(rng.randrange(64)), mtime=0)[: rng.randrange(40)]
    return bytes(packed)


# --- structure: valid requests whose spans relate in odd ways -----------------

WORDS = (
    "chat", "execute_tool", "invoke_agent", "create_agent", "text_completion", "handoff",
    "LLM", "TOOL", "AGENT", "CHAIN", "tool", "llm", "agent", "workflow", "task",
    "pass", "fail", "true", "false", "ok", "error", "tools/call", "", "\x00", "é" * 300,
)  # fmt: skip


def _odd_value(rng: random.Random) -> AnyValue:
    choice = rng.randrange(6)
    if choice == 0:
        return AnyValue(string_value=rng.choice(WORDS))
    if choice == 1:
        return AnyValue(int_value=rng.choice((-(2**63), -1, 0, 1, 7, 2**63 - 1)))
    if choice == 2:
        return AnyValue(double_value=rng.choice((math.nan, math.inf, -math.inf, -0.5, 1e308)))
    if choice == 3:
        return AnyValue(bool_value=rng.random() < 0.5)
    if choice == 4:
        value = AnyValue()
        value.array_value.values.extend(_odd_value(rng) for _ in range(rng.randrange(3)))
        return value
    return AnyValue(bytes_value=rng.randbytes(rng.randrange(9)))


def mutate_structure(
    rng: random.Random, seed: ExportTraceServiceRequest
) -> ExportTraceServiceRequest:
    """A valid request whose spans point at each other (cycles, themselves),
    share ids, swap times, or carry the attributes run assembly reads with
    values of every type: valid bytes, so it goes past decoding into
    classification, assembly, the writer and the reads."""
    message = ExportTraceServiceRequest()
    message.CopyFrom(seed)
    spans = [s for rs in message.resource_spans for ss in rs.scope_spans for s in ss.spans]
    if not spans:
        return message
    for _ in range(rng.randint(1, 4)):
        target = rng.choice(spans)
        choice = rng.randrange(7)
        if choice == 0:  # a parent anywhere, itself included: cycles
            target.parent_span_id = rng.choice(spans).span_id
        elif choice == 1:  # one trace for all, or a span id shared
            for other in spans:
                other.trace_id = target.trace_id
        elif choice == 2:
            rng.choice(spans).span_id = target.span_id
        elif choice == 3:
            target.start_time_unix_nano, target.end_time_unix_nano = (
                target.end_time_unix_nano,
                rng.choice((0, target.start_time_unix_nano, 2**63 - 1)),
            )
        elif choice == 4:  # what the conventions read, with any value
            key = rng.choice(selected_keys())
            target.attributes.append(KeyValue(key=key, value=_odd_value(rng)))
        elif choice == 5:
            target.flags = rng.choice((0, 0x100, 0x300, 2**32 - 1))
            target.kind = rng.randrange(6)
            target.status.code = rng.randrange(3)
        else:
            event = target.events.add(name=rng.choice(("exception", "gen_ai.evaluation.result")))
            event.attributes.append(
                KeyValue(key=rng.choice(selected_keys()), value=_odd_value(rng))
            )
    return message


# --- the input stream ---------------------------------------------------------


# Seeds and results stay small enough for thousands of inputs a second; the
# limits themselves (16 MB bodies, 10,000 spans) have their own tests.
MAX_SEED_BYTES = 48 * 1024
MAX_INPUT_BYTES = 4 * 1024 * 1024


class Mutator:
    """An endless, reproducible stream of Cases from the seeds."""

    def __init__(self, seed: int, messages: list[ExportTraceServiceRequest]) -> None:
        self._rng = random.Random(seed)
        small = [m for m in messages if m.ByteSize() <= MAX_SEED_BYTES]
        self._messages = small
        self._protobuf = [m.SerializeToString() for m in small]
        self._json = [json.dumps(message_to_json(m)).encode() for m in small]

    def next(self, door: str) -> Case:
        rng = self._rng
        content = PROTOBUF if door == "grpc" or rng.random() < 0.5 else JSON
        pool = self._protobuf if content == PROTOBUF else self._json
        body = rng.choice(pool)
        rounds = rng.choice((1, 1, 1, 2, 4))
        if rng.random() < 0.35:  # valid, but odd in structure; sometimes then broken too
            changed = mutate_structure(rng, rng.choice(self._messages))
            body = (
                changed.SerializeToString()
                if content == PROTOBUF
                else json.dumps(message_to_json(changed), allow_nan=True).encode()
            )
            rounds = rng.choice((0, 0, 0, 1))
        for _ in range(rounds):
            if rng.random() < 0.3:
                changed = mutate_bytes(rng, body, rng.choice(pool))
            elif content == PROTOBUF:
                changed = mutate_protobuf(rng, body)
            else:
                changed = mutate_json(rng, body)
            if len(changed) <= MAX_INPUT_BYTES:
                body = changed
        packed = rng.random() < 0.25
        if packed and door == "http":
            body = wrap_gzip(rng, body)
        return Case(door, content, packed, body)
