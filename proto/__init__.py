"""OTLP wire formats only: protobuf / JSON / gzip bytes -> frozen span records.

Imports nothing of ours (import-linter checks it). The collector tells it
which attributes to lift out of each span; everything else stays encoded.
"""

from proto.decode import decode_request, gunzip_limited, parse_request
from proto.errors import DecodeError, TooLarge
from proto.spans import DecodedRequest, Limits, Selection, Value, WireEvent, WireSpan
from proto.stored import StoredSpan, decode_stored

__all__ = [
    "DecodeError",
    "DecodedRequest",
    "Limits",
    "Selection",
    "TooLarge",
    "Value",
    "WireEvent",
    "StoredSpan",
    "WireSpan",
    "decode_request",
    "decode_stored",
    "gunzip_limited",
    "parse_request",
]
