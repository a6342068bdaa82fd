"""DSSE envelopes (CERTS.md section 2): the signing format of in-toto and Sigstore.

`{"payloadType", "payload": base64, "signatures": [{"keyid", "sig": base64}]}`,
the signature over the pre-authentication encoding (PAE)
`"DSSEv1" SP len(type) SP type SP len(payload) SP payload`, lengths as
ASCII decimal byte counts, the payload its raw bytes. Standard base64 with
padding is written; a reader accepts it with or without padding, and the
URL-safe alphabet too, as the DSSE specification asks of readers.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from collector.certificates.keys import SigningKey

STATEMENT_TYPE = "application/vnd.in-toto+json"
HEAD_TYPE = "application/vnd.badge-collector.log-head+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    kind = payload_type.encode()
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def seal(payload_type: str, payload: bytes, key: SigningKey) -> bytes:
    """The envelope's JSON bytes, signed by `key`."""
    signature = key.sign(pae(payload_type, payload))
    envelope = {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": key.kid, "sig": base64.b64encode(signature).decode()}],
    }
    return json.dumps(envelope, separators=(",", ":")).encode()


class NotAnEnvelope(ValueError):
    """Input that is not JSON, or JSON that is not a DSSE envelope."""


class BadEncoding(ValueError):
    """An envelope whose payload or signature is not base64."""


@dataclass(frozen=True, slots=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True, slots=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]


def b64decode(text: str, what: str) -> bytes:
    """Standard or URL-safe base64, padded or not."""
    padded = text.strip() + "=" * (-len(text.strip()) % 4)
    try:
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise BadEncoding(f"the {what} is not base64") from None


def shape_of(data: bytes) -> dict[str, Any]:
    """The envelope's JSON object; NotAnEnvelope when it has not the DSSE shape."""
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise NotAnEnvelope("not JSON") from None
    if not isinstance(parsed, dict):
        raise NotAnEnvelope("not a DSSE envelope: not a JSON object")
    for field in ("payloadType", "payload"):
        if not isinstance(parsed.get(field), str):
            raise NotAnEnvelope(f"not a DSSE envelope: no string {field!r}")
    signatures = parsed.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise NotAnEnvelope("not a DSSE envelope: no 'signatures' list")
    for signature in signatures:
        if not isinstance(signature, dict) or not isinstance(signature.get("sig"), str):
            raise NotAnEnvelope("not a DSSE envelope: a signature without 'sig'")
        if not isinstance(signature.get("keyid", ""), str):
            raise NotAnEnvelope("not a DSSE envelope: a 'keyid' that is not a string")
    return parsed


def decoded(shape: dict[str, Any]) -> Envelope:
    """The envelope's bytes; BadEncoding when they are not base64."""
    return Envelope(
        payload_type=shape["payloadType"],
        payload=b64decode(shape["payload"], "payload"),
        signatures=tuple(
            Signature(str(s.get("keyid", "")), b64decode(s["sig"], "signature"))
            for s in shape["signatures"]
        ),
    )
