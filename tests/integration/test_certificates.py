"""Certificates end to end (CERTS.md sections 1-3), on both databases, each
checked by the verifier this suite writes from the spec (certificates.py),
not by the project's own."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import rfc8785
from cryptography.exceptions import InvalidSignature

from tests.integration.certificates import (
    API,
    get,
    jwks,
    run_id_of,
    send_late_tool,
    send_run,
    statement_digest,
    verified,
)
from tests.integration.harness import Collector, running_collector


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    key = str(tmp_path / "signing.pem")
    with running_collector(tmp_path, database_url=database_url, signing_key=key) as running:
        yield running


def certificate(c: Collector, path: str) -> bytes:
    reply = get(c, f"{API}{path}/certificate")  # keyless, as the summary is
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"] == "application/json"
    return reply.content


def test_a_run_certificate_holds_its_keyless_summary_spans_digest_and_key(
    collector: Collector,
) -> None:
    sent = send_run(collector)
    collector.settle()
    run_id = run_id_of(collector, sent)
    envelope = certificate(collector, f"/runs/{run_id}")
    statement = verified(envelope, jwks(collector))
    assert statement["predicateType"] == "urn:badge-collector:run:v1"
    assert statement["subject"][0]["name"] == f"run:{run_id}"
    predicate = statement["predicate"]
    summary = get(collector, f"{API}/runs", agent_id=predicate["run"]["agent_id"]).json()["items"]
    assert predicate["run"] == summary[0]  # the keyless run summary, field for field
    canonical = get(collector, f"{API}/runs/{run_id}/trace", collector.key, canonical="true")
    assert canonical.status_code == 200
    spans = canonical.json()
    assert [s["span_id"] for s in spans] == sorted(s["span_id"] for s in spans)
    assert rfc8785.dumps(spans) == canonical.content  # exactly the bytes digested
    assert predicate["spans"] == {
        "count": 4,
        "digest": hashlib.sha256(canonical.content).hexdigest(),
    }
    root = next(s for s in spans if s["parent_span_id"] is None)
    assert root["start_ns"].isdigit() and isinstance(root["kind"], int)
    [key_row] = collector.query("SELECT id, role FROM keys WHERE owner = 'owner-a'")
    assert predicate["key"] == {"id": key_row[0], "role": key_row[1]}
    assert predicate["supersedes"] is None and predicate["issued_at"].endswith("Z")
    assert set(predicate["collector"]) == {"version", "conventions"}
    again = certificate(collector, f"/runs/{run_id}")
    assert again == envelope  # answered from storage while the run is unchanged


def test_a_run_certificate_carries_no_text_a_span_wrote(collector: Collector) -> None:
    secret = "the-expected-answer-is-forty-two"
    sent = send_run(
        collector, root_attributes={"gen_ai.prompt": secret, "error.type": secret}, error=True
    )
    collector.settle()
    envelope = certificate(collector, f"/runs/{run_id_of(collector, sent)}")
    payload = base64.b64decode(json.loads(envelope)["payload"])
    assert secret.encode() not in payload
    path = f"{API}/runs/{run_id_of(collector, sent)}"
    assert get(collector, path, collector.key).json()["error_class"] == secret
    assert json.loads(payload)["predicate"]["run"]["error_class"] == "other"  # as keyless


def test_every_flipped_byte_of_payload_or_signature_fails(collector: Collector) -> None:
    sent = send_run(collector)
    collector.settle()
    envelope = json.loads(certificate(collector, f"/runs/{run_id_of(collector, sent)}"))
    keys = jwks(collector)
    payload = base64.b64decode(envelope["payload"])
    signature = base64.b64decode(envelope["signatures"][0]["sig"])
    for where, original in (("payload", payload), ("sig", signature)):
        for index in range(len(original)):
            flipped = bytearray(original)
            flipped[index] ^= 0x01
            tampered = json.loads(json.dumps(envelope))
            text = base64.b64encode(bytes(flipped)).decode()
            if where == "payload":
                tampered["payload"] = text
            else:
                tampered["signatures"][0]["sig"] = text
            with pytest.raises(InvalidSignature):
                verified(json.dumps(tampered).encode(), keys)


def test_a_late_span_supersedes_the_run_certificate_and_the_log_chains_both(
    collector: Collector,
) -> None:
    sent = send_run(collector)
    collector.settle()
    run_id = run_id_of(collector, sent)
    first = certificate(collector, f"/runs/{run_id}")
    send_late_tool(collector, sent)
    collector.settle()
    second = certificate(collector, f"/runs/{run_id}")
    keys = jwks(collector)
    old, new = verified(first, keys), verified(second, keys)
    assert new["predicate"]["supersedes"] == statement_digest(first)
    assert new["predicate"]["run"]["steps"] == old["predicate"]["run"]["steps"] + 1
    assert new["predicate"]["spans"]["count"] == 5
    assert new["subject"][0]["digest"] != old["subject"][0]["digest"]
    log = get(collector, f"{API}/certificates/log").json()
    assert log["size"] == 2
    chain = "0" * 64
    for n, entry in enumerate(log["items"], start=1):
        chain = hashlib.sha256(bytes.fromhex(chain) + bytes.fromhex(entry["statement_digest"]))
        chain = chain.hexdigest()
        assert (entry["n"], entry["chain"], entry["kind"]) == (n, chain, "run")
    assert [e["statement_digest"] for e in log["items"]] == [
        statement_digest(first),
        statement_digest(second),
    ]
    head_reply = get(collector, f"{API}/certificates/head")
    head = verified(head_reply.content, keys, "application/vnd.badge-collector.log-head+json")
    assert head["_type"] == "urn:badge-collector:log-head:v1"
    assert (head["size"], head["chain"]) == (2, chain)
    status = get(collector, f"{API}/certificates/{statement_digest(first)}").json()
    assert status["superseded_by"] == statement_digest(second)
    assert get(collector, f"{API}/certificates/log", after=1, limit=1).json()["items"][0]["n"] == 2


def test_certificates_and_the_log_are_never_edited(collector: Collector) -> None:
    sent = send_run(collector)
    collector.settle()
    certificate(collector, f"/runs/{run_id_of(collector, sent)}")
    for statement in ("UPDATE certificates SET kind = 'x'", "DELETE FROM certificate_log"):
        with pytest.raises(Exception, match="append-only"):
            collector.execute(statement)
    assert collector.query("SELECT count(*) FROM certificate_log")[0][0] == 1


def screened(c: Collector, screening: str, task: str, round_: int) -> None:
    send_run(
        c,
        task,
        service="screened-agent",
        root_attributes={
            "badge.screening.id": screening,
            "badge.screening.round": round_,
            "badge.suite.name": "support",
            "badge.suite.digest": "ab" * 32,
        },
    )


def test_screening_and_score_certificates_name_their_parts_by_digest(
    collector: Collector,
) -> None:
    for round_ in (1, 2):
        for task in ("a", "b"):
            screened(collector, "scr-1", task, round_)
    collector.settle()
    envelope = certificate(collector, "/screenings/scr-1")
    keys = jwks(collector)
    statement = verified(envelope, keys)
    predicate = statement["predicate"]
    assert statement["subject"][0]["name"] == "screening:scr-1"
    assert predicate["suite"] == {"name": "support", "digest": "ab" * 32, "tasks": 2, "rounds": 2}
    assert predicate["scores"]["runs_counted"] == 4
    assert predicate["scores"]["verified_state"] == "self_reported"
    run_ids = sorted(r[0] for r in collector.query("SELECT id FROM runs"))
    runs = [certificate(collector, f"/runs/{ident}") for ident in run_ids]
    assert predicate["runs"] == [statement_digest(run) for run in runs]  # sorted by run id
    agent = predicate["agent"]
    score = verified(certificate(collector, f"/agents/{agent['id']}"), keys)
    assert score["subject"][0]["name"] == f"agent:{agent['id']}"
    stats = get(collector, f"{API}/agents/{agent['id']}/stats").json()
    assert score["predicate"]["composite"]["composite_score"] == stats["composite_score"]
    assert score["predicate"]["screenings"] == [statement_digest(envelope)]
    assert set(score["predicate"]["radar"]) >= {"correctness", "latency", "runs_counted"}


def test_a_subject_not_terminal_is_409_and_unknown_ones_404(collector: Collector) -> None:
    assert get(collector, f"{API}/runs/nope/certificate").status_code == 404
    assert get(collector, f"{API}/screenings/nope/certificate").status_code == 404
    assert get(collector, f"{API}/agents/not-a-uuid/certificate").status_code == 404
    from bench.support.otlp import chat_awaiting_its_root, new_span_id, new_trace_id, request

    trace = new_trace_id()
    body = request([chat_awaiting_its_root(trace, new_span_id())]).SerializeToString()
    assert collector.post(body).status_code == 200
    collector.settle()
    [(run_id, status)] = collector.query("SELECT id, status FROM runs")
    assert status == "running"
    reply = get(collector, f"{API}/runs/{run_id}/certificate")
    assert reply.status_code == 409 and "terminal" in reply.json()["detail"]


def test_the_canonical_trace_is_owner_only_like_the_trace(collector: Collector) -> None:
    sent = send_run(collector)
    collector.settle()
    path = f"{API}/runs/{run_id_of(collector, sent)}/trace"
    assert get(collector, path, canonical="true").status_code == 401
    other = collector.service.keys.create("owner-b")
    assert get(collector, path, other, canonical="true").status_code == 403
    assert get(collector, path, collector.key, canonical="true").status_code == 200


def test_a_soft_deleted_agent_keeps_its_certificates_and_its_badge_says_deleted(
    collector: Collector,
) -> None:
    sent = send_run(collector)
    collector.settle()
    run_id = run_id_of(collector, sent)
    agent_id = collector.query("SELECT agent_id FROM runs")[0][0]
    run_before = certificate(collector, f"/runs/{run_id}")
    score_before = certificate(collector, f"/agents/{agent_id}")
    auth = {"authorization": f"Bearer {collector.key}"}
    url = f"{collector.http_url}{API}/agents/{agent_id}"
    assert collector.http.delete(url, headers=auth).status_code == 204
    assert get(collector, f"{API}/agents/{agent_id}").status_code == 404
    assert certificate(collector, f"/runs/{run_id}") == run_before
    assert certificate(collector, f"/agents/{agent_id}") == score_before
    badge = get(collector, f"/badge/{agent_id}.svg")
    assert badge.status_code == 200 and "deleted" in badge.text and "#9f9f9f" in badge.text
    assert get(collector, f"{API}/agents/{agent_id}/badge.json").json()["message"] == "deleted"


def test_the_jwks_lists_the_signing_key(collector: Collector, tmp_path: Path) -> None:
    from collector.certificates.keyfile import read_key

    key = read_key(tmp_path / "signing.pem")
    [jwk] = jwks(collector)["keys"]
    assert jwk["kid"] == key.kid and "badge:retired_at" not in jwk
    raw = base64.urlsafe_b64decode(jwk["x"] + "=")
    assert raw == key.public_raw and "=" not in jwk["x"]


def test_without_a_signing_key_on_postgresql_certificates_answer_503_saying_how(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from tests.conftest import PostgresCluster

    cluster: PostgresCluster = request.getfixturevalue("postgres")
    with running_collector(tmp_path, database_url=cluster.create_database()) as c:
        assert c.service.signing_key is None
        sent = send_run(c)
        c.settle()
        reply = get(c, f"{API}/runs/{run_id_of(c, sent)}/certificate")
        assert reply.status_code == 503
        assert "--signing-key" in reply.json()["detail"]
        assert "BADGE_SIGNING_KEY" in reply.json()["detail"]
        assert get(c, f"{API}/certificates/head").status_code == 503
        assert get(c, "/.well-known/jwks.json").json() == {"keys": []}
        assert get(c, f"{API}/certificates/log").json() == {"items": [], "size": 0}
        agent_id = c.query("SELECT agent_id FROM runs")[0][0]
        assert get(c, f"/badge/{agent_id}.svg").status_code == 200  # badges need no key
