"""OTLP wire formats only: protobuf / JSON / gzip bytes -> frozen span records.

Imports nothing of ours (import-linter checks it). The collector tells it
which attributes to lift out of each span; everything else stays encoded.
"""

from proto.codecs import CODECS, JSON, PROTOBUF, Codec, codec_for, export_response_message
from proto.decode import decode_body, decode_request, gunzip_limited, parse_request
from proto.errors import DecodeError, TooLarge
from proto.spans import DecodedRequest, Limits, Selection, Value, WireEvent, WireSpan
from proto.stored import StoredSpan, decode_stored

__all__ = [
    "CODECS",
    "JSON",
    "PROTOBUF",
    "Codec",
    "DecodeError",
    "DecodedRequest",
    "Limits",
    "Selection",
    "TooLarge",
    "Value",
    "WireEvent",
    "StoredSpan",
    "WireSpan",
    "codec_for",
    "decode_body",
    "decode_request",
    "export_response_message",
    "decode_stored",
    "gunzip_limited",
    "parse_request",
]
