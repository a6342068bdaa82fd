"""Canonical JSON (RFC 8785, through the `rfc8785` package) and its digests.

CERTS.md section 2: statements are serialised in the JSON Canonicalization
Scheme so their bytes, and so their digests, can be recomputed by anyone
from the parsed JSON. RFC 8785 numbers are IEEE doubles: an integer that a
double cannot hold exactly (|n| >= 2^53) is written as a decimal string,
the spans digest's rule (CERTS.md section 2), applied to every value we
sign so that no value is refused or rounded; so is a whole double in that
range below 1e21 (1e16, say), which JCS writes as integer digits that a
parser would read back as such an integer. A float that is not finite
(JSON has none) is written as the protobuf JSON mapping spells it ("NaN",
"Infinity", "-Infinity"), as the trace view already shows it (proto.view).

`json_ready` is idempotent: what it returns, parsed back from its canonical
bytes, is equal to itself, so a verifier that parses a statement and
canonicalises a part of it gets the bytes we hashed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import rfc8785

SAFE_INTEGER = 1 << 53  # CERTS.md section 2: integers as JSON numbers when |n| < 2^53
EXPONENT_FORM = 1e21  # from here on JCS (ECMAScript) writes a number with an exponent


def json_ready(value: Any) -> Any:
    """The value as plain JSON types, with the two substitutions above."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return value if -SAFE_INTEGER < value < SAFE_INTEGER else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        if SAFE_INTEGER <= abs(value) < EXPONENT_FORM and value.is_integer():
            return str(int(value))  # JCS writes it as integer digits: it would parse back as one
        return value
    if isinstance(value, Mapping):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def attribute_json(value: Any) -> Any:
    """A span attribute's value as the spans digest lists it (CERTS.md section
    2): integers as JSON numbers when |n| < 2^53, else decimal strings, and
    every double a JSON number, whole or not (1e16 is RFC 8785's
    `10000000000000000`, as the trace view's `1e+16` canonicalises), unlike
    `json_ready`, which turns such a double into a string for the statement's
    own fields. A verifier that parses the list with doubles for numbers
    recanonicalises it to the same bytes; a non-finite double arrives here
    already named by proto.view, and is named here too if not."""
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, Mapping):
        return {str(key): attribute_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [attribute_json(item) for item in value]
    return json_ready(value)


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of a value already `json_ready`."""
    return rfc8785.dumps(value)


def members(value: Mapping[str, Any]) -> dict[str, bytes]:
    """Each member of an object, `"key":value`, in canonical bytes: an object
    is its members in key order, so a part canonicalised once can be put
    into two objects (a predicate with and without its volatile fields)."""
    return {key: canonical_json(key) + b":" + canonical_json(item) for key, item in value.items()}


def joined(parts: Mapping[str, bytes]) -> bytes:
    """The canonical object of members from `members`: RFC 8785 orders keys
    by their UTF-16 code units (section 3.2.3)."""
    return b"{" + b",".join(parts[key] for key in sorted(parts, key=_utf16)) + b"}"


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of the canonical bytes of a `json_ready` value."""
    return sha256_hex(canonical_json(value))
