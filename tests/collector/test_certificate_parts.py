"""The pure parts of certificates (collector/certificates): canonical JSON,
the PAE, digests, the chain, key ids (CERTS.md sections 1-3)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from collector.certificates.canonical import attribute_json, canonical_json, json_ready
from collector.certificates.dsse import pae
from collector.certificates.keys import from_pem, generate, kid_of, to_pem
from collector.certificates.statements import (
    ZERO_CHAIN,
    Stamp,
    next_chain,
    statement,
    subject_digest,
)

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(values)
def test_canonical_bytes_survive_a_round_trip_through_any_json_parser(value: Any) -> None:
    ready = json_ready(value)
    data = canonical_json(ready)
    assert rfc8785.dumps(json.loads(data)) == data  # a verifier recomputes the same bytes
    assert json_ready(json.loads(data)) == json.loads(data)


@given(st.dictionaries(st.text(), values, max_size=6))
def test_a_statement_is_in_canonical_form_whatever_its_content(content: dict[str, Any]) -> None:
    content = {**content, "\U0001f600 astral": 1, "\uff5e wide": 2}  # UTF-16 key order
    made = statement("score", "agent:a", json_ready(content), Stamp("t", "v", "c", None))
    parsed = json.loads(made.payload)
    assert rfc8785.dumps(parsed) == made.payload
    assert made.subject_digest == parsed["subject"][0]["digest"]["sha256"]
    assert made.subject_digest == subject_digest(parsed["predicate"])


def test_integers_past_2_53_and_non_finite_floats_become_strings() -> None:
    assert json_ready([2**53 - 1, 2**53, -(2**53), 1.5]) == [
        2**53 - 1,
        "9007199254740992",
        "-9007199254740992",
        1.5,
    ]
    assert json_ready([math.nan, math.inf, -math.inf]) == ["NaN", "Infinity", "-Infinity"]
    assert json_ready({"a": (1, True)}) == {"a": [1, True]}


def test_the_pae_is_dsses_own_example() -> None:
    # github.com/secure-systems-lab/dsse protocol.md, "Test vectors"
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"  # byte lengths


def test_the_chain_hashes_the_previous_link_with_the_statement_digest() -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    first = next_chain(ZERO_CHAIN, digest)
    assert first == hashlib.sha256(bytes(32) + bytes.fromhex(digest)).hexdigest()
    assert (
        next_chain(first, digest)
        == hashlib.sha256(bytes.fromhex(first) + bytes.fromhex(digest)).hexdigest()
    )


def test_two_issues_of_an_unchanged_subject_share_the_subject_digest() -> None:
    content = {"run": {"id": "r", "steps": 3}}
    one = statement("run", "run:r", content, Stamp("2026-01-01T00:00:00Z", "1", "c", None))
    two = statement("run", "run:r", content, Stamp("2026-02-01T00:00:00Z", "2", "d", "ab" * 32))
    assert one.subject_digest == two.subject_digest == subject_digest(content)
    assert one.digest != two.digest == hashlib.sha256(two.payload).hexdigest()
    parsed = json.loads(two.payload)
    assert subject_digest(parsed["predicate"]) == two.subject_digest
    assert rfc8785.dumps(parsed) == two.payload


def test_a_key_id_is_16_hex_of_the_raw_public_keys_sha256_and_pem_keeps_the_key() -> None:
    key = generate()
    assert key.kid == kid_of(key.public_raw) == hashlib.sha256(key.public_raw).hexdigest()[:16]
    assert to_pem(key).startswith(b"-----BEGIN PRIVATE KEY-----")
    assert from_pem(to_pem(key)).public_raw == key.public_raw


def test_the_spans_digest_keeps_every_finite_double_a_number_and_big_integers_strings() -> None:
    # CERTS.md section 2: floats as JSON, integers as strings from 2^53 on
    attributes = {"f": 1e16, "g": 2.5e21, "i": 2**53, "n": [3, 2**60, 1e17], "x": math.inf}
    assert attribute_json(attributes) == {
        "f": 1e16,
        "g": 2.5e21,
        "i": "9007199254740992",
        "n": [3, "1152921504606846976", 1e17],
        "x": "Infinity",
    }
    data = canonical_json(attribute_json(attributes))
    assert data.startswith(b'{"f":10000000000000000,"g":2.5e+21,')
    assert rfc8785.dumps(json.loads(data, parse_int=float)) == data
