"""Helpers of the certificate tests: a verifier written here from CERTS.md
alone (the PAE, `cryptography`'s Ed25519 and `rfc8785`, none of the
project's code), and runs sent through the HTTP door."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from bench.support.otlp import agent_run, attrs, new_span_id, request, span
from tests.integration.harness import Collector

API = "/api/v1"
STATEMENT_TYPE = "application/vnd.in-toto+json"
VOLATILE = ("issued_at", "supersedes", "collector")


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding, as CERTS.md section 2 writes it."""
    kind = payload_type.encode()
    return b" ".join(
        [b"DSSEv1", str(len(kind)).encode(), kind, str(len(payload)).encode(), payload]
    )


def public_key(jwks: dict[str, Any], kid: str) -> Ed25519PublicKey:
    [jwk] = [k for k in jwks["keys"] if k["kid"] == kid]
    assert (jwk["kty"], jwk["crv"], jwk["use"], jwk["alg"]) == ("OKP", "Ed25519", "sig", "EdDSA")
    raw = base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4))
    assert hashlib.sha256(raw).hexdigest()[:16] == kid  # CERTS.md section 1: the kid
    return Ed25519PublicKey.from_public_bytes(raw)


def verified(envelope: bytes, jwks: dict[str, Any], payload_type: str = STATEMENT_TYPE) -> Any:
    """The statement (or head) of a valid envelope; raises (InvalidSignature,
    AssertionError, ValueError) on any failed check."""
    document = json.loads(envelope)
    assert document["payloadType"] == payload_type
    payload = base64.b64decode(document["payload"], validate=True)
    [signature] = document["signatures"]
    key = public_key(jwks, signature["keyid"])
    key.verify(base64.b64decode(signature["sig"], validate=True), pae(payload_type, payload))
    parsed = json.loads(payload)
    assert rfc8785.dumps(parsed) == payload  # RFC 8785 form: reproducible bytes
    if payload_type == STATEMENT_TYPE:
        assert parsed["_type"] == "https://in-toto.io/Statement/v1"
        bare = {k: v for k, v in parsed["predicate"].items() if k not in VOLATILE}
        [subject] = parsed["subject"]
        assert subject["digest"]["sha256"] == hashlib.sha256(rfc8785.dumps(bare)).hexdigest()
    return parsed


def statement_digest(envelope: bytes) -> str:
    return hashlib.sha256(base64.b64decode(json.loads(envelope)["payload"])).hexdigest()


def get(c: Collector, path: str, key: str | None = None, **params: Any) -> Any:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return c.http.get(f"{c.http_url}{path}", params=params, headers=headers)


def jwks(c: Collector) -> dict[str, Any]:
    reply = get(c, "/.well-known/jwks.json")
    assert reply.status_code == 200, reply.text
    document: dict[str, Any] = reply.json()
    return document


@dataclass
class SentRun:
    trace_id: bytes
    root: bytes
    agent_span: bytes
    service: str


def send_run(
    c: Collector,
    task: str = "t1",
    *,
    service: str = "agent-a",
    root_attributes: dict[str, Any] | None = None,
    key: str = "default",
    error: bool = False,
) -> SentRun:
    """One GenAI-convention run (root > invoke_agent > chat + a tool)."""
    message: ExportTraceServiceRequest = agent_run(task, service=service, cost=0.002, error=error)
    spans = message.resource_spans[0].scope_spans[0].spans
    root, agent = spans[0], spans[1]
    root.attributes.extend(attrs(root_attributes or {}))
    assert c.post(message.SerializeToString(), key=key).status_code == 200
    return SentRun(root.trace_id, root.span_id, agent.span_id, service)


def send_late_tool(c: Collector, run: SentRun, name: str = "late") -> None:
    """A tool step of a run already stored: it recomputes the run (one more step)."""
    late = span(
        run.trace_id,
        new_span_id(),
        f"execute_tool {name}",
        parent=run.agent_span,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
    )
    assert c.post(request([late], run.service).SerializeToString()).status_code == 200


def run_id_of(c: Collector, run: SentRun) -> str:
    rows = c.query("SELECT id FROM runs WHERE trace_id = ?", run.trace_id.hex())
    return str(rows[0][0])


def agent_id_of(c: Collector, name: str) -> str:
    return str(c.query("SELECT id FROM agents WHERE name = ?", name)[0][0])
