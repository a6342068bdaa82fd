"""CERTS.md sections 1 and 2 checked by a verifier written from the spec alone
(tests/integration/spec_checks.py), against a real collector on both databases:
the keys and their JWKS, the envelope and the statement of each kind, what a
certificate must and must not carry (section 3: test_certs_issuing_from_the_spec.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.integration.harness import Collector
from tests.integration.spec_checks import (
    check_jwks,
    check_statement,
    kid_of_raw,
    open_envelope,
)
from tests.integration.spec_runs import (
    API,
    SECRET,
    agent_id,
    canonical_spans,
    cli,
    envelope,
    get,
    keys_of,
    run_id,
    run_spans,
    send,
    signed_collector,
)


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with signed_collector(tmp_path, database_url) as running:
        yield running


@pytest.fixture
def signing_key(collector: Collector, tmp_path: Path) -> Path:
    return tmp_path / "keys" / "signing.pem"


# -- section 1: keys -----------------------------------------------------------


def test_the_jwks_publishes_the_pem_files_key_with_the_kid_the_spec_derives(
    collector: Collector, signing_key: Path
) -> None:
    pem = signing_key.read_bytes()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, Ed25519PrivateKey)
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    reply = get(collector, "/.well-known/jwks.json")  # no key
    assert reply.status_code == 200
    document = reply.json()
    keys = check_jwks(document)
    assert document["keys"][0]["kid"] == kid_of_raw(raw)  # the current key first
    assert "badge:retired_at" not in document["keys"][0]
    assert list(keys) == [kid_of_raw(raw)]
    # never in the database: no column holds the private key's bytes
    private_raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    for (stored,) in collector.query("SELECT public_key FROM signing_keys"):
        assert bytes(stored) != private_raw and bytes(stored) == raw


def test_a_rotated_key_is_retired_in_the_jwks_and_its_certificates_still_verify(
    collector: Collector, signing_key: Path, database_url: str
) -> None:
    first = run_spans("rot-1")
    send(collector, first)
    collector.settle()
    old_envelope = envelope(collector, f"/runs/{run_id(collector, first)}")
    old_kid = open_envelope(old_envelope, keys_of(collector)).kid
    done = cli("signing-key", "rotate", "--signing-key", str(signing_key), "--database-url",
               database_url)  # fmt: skip
    assert done.returncode == 0, done.stderr
    retired_file = signing_key.with_name(f"{signing_key.name}.{old_kid}.retired")
    assert retired_file.exists()
    kept = serialization.load_pem_private_key(retired_file.read_bytes(), password=None)
    assert isinstance(kept, Ed25519PrivateKey)
    new = serialization.load_pem_private_key(signing_key.read_bytes(), password=None)
    assert isinstance(new, Ed25519PrivateKey)
    new_kid = kid_of_raw(
        new.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    assert old_kid in done.stdout + done.stderr and new_kid in done.stdout + done.stderr
    second = run_spans("rot-2")
    send(collector, second)
    collector.settle()
    new_envelope = envelope(collector, f"/runs/{run_id(collector, second)}")
    document = get(collector, "/.well-known/jwks.json").json()
    keys = check_jwks(document)
    assert [k["kid"] for k in document["keys"]] == [new_kid, old_kid]  # current first
    retired_at = document["keys"][1]["badge:retired_at"]
    assert "badge:retired_at" not in document["keys"][0]
    assert abs(datetime.fromisoformat(retired_at).timestamp() - time.time()) < 600
    assert open_envelope(old_envelope, keys).kid == old_kid  # still verifies
    assert open_envelope(new_envelope, keys).kid == new_kid


# -- section 2: the envelope, the statement, the three kinds --------------------


def test_a_run_certificate_is_a_signed_statement_of_its_keyless_summary(
    collector: Collector,
) -> None:
    spans = run_spans("summary-task", extra={"note": f"{SECRET} attr"})
    send(collector, spans)
    collector.settle()
    ident = run_id(collector, spans)
    data = envelope(collector, f"/runs/{ident}")
    opened = open_envelope(data, keys_of(collector))
    predicate = check_statement(opened, "run", f"run:{ident}")
    assert set(predicate) == {"run", "spans", "key", "issued_at", "collector", "supersedes"}
    assert predicate["supersedes"] is None
    issued = datetime.fromisoformat(predicate["issued_at"].replace("Z", "+00:00"))
    assert issued.tzinfo is not None and issued.utcoffset() == UTC.utcoffset(None)
    assert abs(issued.timestamp() - time.time()) < 120  # the collector's clock
    assert predicate["collector"]["version"] == metadata.version("badge-collector")
    summary = [
        r
        for r in get(collector, f"{API}/runs", agent_id=predicate["run"]["agent_id"]).json()[
            "items"
        ]
        if r["id"] == ident
    ]
    assert predicate["run"] == summary[0]  # field for field, as keyless
    detail = get(collector, f"{API}/runs/{ident}").json()
    assert {k: v for k, v in detail.items() if k in predicate["run"]} == predicate["run"]
    assert predicate["run"]["owner_view"] is False
    assert (predicate["run"]["status"], predicate["run"]["steps"]) == ("completed", 1)
    assert (predicate["run"]["input_tokens"], predicate["run"]["output_tokens"]) == (120, 7)


def test_the_spans_digest_is_of_the_spans_sent_and_the_canonical_trace_is_owner_only(
    collector: Collector,
) -> None:
    extra = {
        "s": "text",
        "b": False,
        "small": 2**53 - 1,
        "big": 2**53,
        "negative_big": -(2**60),
        "f": 0.25,
        "whole_f": 3.0,
        "large_f": 1e16,
        "arr": [1, 2**62, "x", True],
    }
    spans = run_spans("digest-task", extra=extra)
    send(collector, spans)
    collector.settle()
    ident = run_id(collector, spans)
    expected = canonical_spans(spans)  # built from what was sent, as the spec says
    predicate = check_statement(
        open_envelope(envelope(collector, f"/runs/{ident}"), keys_of(collector)),
        "run",
        f"run:{ident}",
    )
    trace = get(collector, f"{API}/runs/{ident}/trace", collector.key, canonical="true")
    assert trace.status_code == 200
    assert trace.content == expected
    assert predicate["spans"] == {"count": 4, "digest": hashlib.sha256(expected).hexdigest()}
    assert get(collector, f"{API}/runs/{ident}/trace", canonical="true").status_code in (401, 403)
    stranger = collector.service.keys.create("owner-b")
    reply = get(collector, f"{API}/runs/{ident}/trace", stranger, canonical="true")
    assert reply.status_code in (403, 404)


def test_the_run_certificate_names_the_key_of_the_root_as_keys_list_shows_it(
    collector: Collector, database_url: str
) -> None:
    grader = collector.service.keys.create("owner-a", role="grader")
    spans = run_spans("key-task")
    send(collector, spans, key=grader)
    collector.settle()
    ident = run_id(collector, spans)
    predicate = open_envelope(envelope(collector, f"/runs/{ident}"), keys_of(collector)).document[
        "predicate"
    ]
    listed = cli("keys", "list", "--database-url", database_url)
    assert listed.returncode == 0, listed.stderr
    [line] = [row for row in listed.stdout.splitlines() if grader[:8] in row or "grader" in row]
    assert str(predicate["key"]["id"]) in line.split()
    assert predicate["key"]["role"] == "grader"
    assert grader not in envelope(collector, f"/runs/{ident}").decode()


def secret_free(data: bytes) -> None:
    payload = base64.b64decode(json.loads(data)["payload"])
    assert SECRET.encode() not in payload, payload


def test_no_certificate_carries_a_prompt_output_expected_answer_or_attribute(
    collector: Collector,
) -> None:
    grader = collector.service.keys.create("owner-a", role="grader")
    root = {
        "badge.screening.id": "scr-secret",
        "badge.screening.round": 1,
        "badge.suite.name": "suite-s",
        "badge.suite.digest": "cd" * 32,
        "badge.run.id": "scr-secret/t/1",
        "error.type": f"{SECRET} class",
    }
    spans = run_spans("t", root)
    send(collector, spans, key=grader)
    collector.settle()
    grade = {
        "agent": "spec-agent",
        "run_key": "scr-secret/t/1",
        "success": False,
        "score": 0.5,
        "expected_output": f"{SECRET} grade expected",
        "output": f"{SECRET} grade output",
        "error_class": f"{SECRET} grade class",
    }
    posted = collector.http.post(
        f"{collector.http_url}{API}/grades",
        json=grade,
        headers={"authorization": f"Bearer {grader}"},
    )
    assert posted.status_code == 202, posted.text
    collector.settle()
    ident = run_id(collector, spans)
    owner_view = get(collector, f"{API}/runs/{ident}", collector.key).json()
    assert SECRET in owner_view["grade"]["output"]  # the texts are stored: the owner sees them
    agent = agent_id(collector, "spec-agent")
    for path in (f"/runs/{ident}", "/screenings/scr-secret", f"/agents/{agent}"):
        secret_free(envelope(collector, path))


def test_a_screening_certificate_holds_its_suite_scores_and_run_certificates(
    collector: Collector,
) -> None:
    grader = collector.service.keys.create("owner-a", role="grader")
    for round_ in (1, 2, 3):
        for task in ("a", "b"):
            root = {
                "badge.screening.id": "scr-2",
                "badge.screening.round": round_,
                "badge.suite.name": "support",
                "badge.suite.digest": "ab" * 32,
                "badge.agent.version": "1.2.0",
                "badge.run.success": task == "a" or round_ == 1,
            }
            send(collector, run_spans(task, root), service="screened", key=grader)
    collector.settle()
    agent = agent_id(collector, "screened")
    keys = keys_of(collector)
    opened = open_envelope(envelope(collector, "/screenings/scr-2"), keys)
    predicate = check_statement(opened, "screening", "screening:scr-2")
    view = get(collector, f"{API}/agents/{agent}/screenings/scr-2").json()
    assert predicate["version"] == "1.2.0" == view["version"]
    assert predicate["suite"] == {"name": "support", "digest": "ab" * 32, "tasks": 2, "rounds": 3}
    assert predicate["agent"]["id"] == agent
    scores = predicate["scores"]
    assert scores["composite"] == view["composite_score"]
    assert (scores["pass_1"], scores["pass_3"], scores["pass_5"]) == (
        view["pass_1"],
        view["pass_3"],
        view["pass_5"],
    )
    axes = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
    assert {a: scores["radar"][a] for a in axes} == {a: view["radar"][a] for a in axes}
    assert scores["verified_state"] == "verified"
    assert scores["runs_counted"] == 6
    ids = sorted(str(r[0]) for r in collector.query("SELECT id FROM runs"))
    digests = [open_envelope(envelope(collector, f"/runs/{i}"), keys).statement_digest for i in ids]
    assert predicate["runs"] == digests  # sorted by run id


def test_a_score_certificate_holds_the_agent_its_composite_radar_and_newest_screenings(
    collector: Collector,
) -> None:
    for n in range(11):
        root = {
            "badge.screening.id": f"s{n:02d}",
            "badge.screening.round": 1,
            "badge.suite.name": "suite",
            "badge.suite.digest": "ef" * 32,
        }
        spans = run_spans(f"task-{n}", root)
        for span in spans:
            span.start_ns += n * 10**9
            span.end_ns += n * 10**9
        send(collector, spans, service="scored")
    collector.settle()
    agent = agent_id(collector, "scored")
    keys = keys_of(collector)
    opened = open_envelope(envelope(collector, f"/agents/{agent}"), keys)
    predicate = check_statement(opened, "score", f"agent:{agent}")
    about = get(collector, f"{API}/agents/{agent}").json()
    assert predicate["agent"] == {"id": agent, "name": "scored", "owner": about["owner"]}
    stats = get(collector, f"{API}/agents/{agent}/stats").json()
    composite = predicate["composite"]
    for name in ("composite_score", "success_rate", "latency_score", "cost_score"):
        assert composite[name] == stats[name], name
    assert predicate["verified_state"] == stats["verified_state"] == "self_reported"
    fitness = get(collector, f"{API}/agents/{agent}/fitness").json()
    for axis in ("correctness", "latency", "cost", "tool_efficiency", "robustness"):
        assert predicate["radar"][axis] == fitness[axis], axis
    listed = get(collector, f"{API}/agents/{agent}/screenings").json()["items"]
    newest = [item["screening_id"] for item in listed][:10]
    assert len(newest) == 10 and "s00" not in newest
    named = [
        open_envelope(envelope(collector, f"/screenings/{s}"), keys).statement_digest
        for s in newest
    ]
    assert predicate["screenings"] == named
