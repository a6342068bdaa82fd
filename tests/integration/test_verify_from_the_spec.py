"""CERTS.md section 4, `badge-collector verify`, and section 1's key settings,
checked from the spec alone on both databases: exit 0 valid, 1 invalid with
the reason, 2 unusable input, offline with a JWKS file and online with --url;
certificates forged here with the collector's own key (the PAE and Ed25519
spelled out in the test) fail for the reason the spec names."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.integration.harness import Collector, running_collector
from tests.integration.spec_checks import IN_TOTO, dsse_pae, predicate_core
from tests.integration.spec_runs import (
    API,
    SentSpan,
    envelope,
    get,
    run_id,
    run_spans,
    send,
    signed_collector,
)


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with signed_collector(tmp_path, database_url) as running:
        yield running


def verify(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector", "verify", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def sealed(statement: Any, key_file: Path, kid: str) -> bytes:
    """An envelope signed here with the collector's private key."""
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    payload = statement if isinstance(statement, bytes) else rfc8785.dumps(statement)
    signature = private.sign(dsse_pae(IN_TOTO, payload))
    return json.dumps(
        {
            "payloadType": IN_TOTO,
            "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": kid, "sig": base64.b64encode(signature).decode()}],
        }
    ).encode()


def issued(c: Collector, tmp_path: Path, task: str = "v") -> tuple[Path, Path, str]:
    spans = run_spans(task)
    send(c, spans)
    c.settle()
    ident = run_id(c, spans)
    cert = tmp_path / f"{task}.json"
    cert.write_bytes(envelope(c, f"/runs/{ident}"))
    keys = tmp_path / "jwks.json"
    keys.write_bytes(get(c, "/.well-known/jwks.json").content)
    return cert, keys, ident


def test_offline_a_valid_certificate_exits_0_naming_kind_subject_figures_and_key(
    collector: Collector, tmp_path: Path
) -> None:
    cert, keys, ident = issued(collector, tmp_path)
    done = verify(str(cert), "--keys", str(keys))
    assert done.returncode == 0, done.stdout + done.stderr
    kid = json.loads(cert.read_bytes())["signatures"][0]["keyid"]
    for said in ("run", f"run:{ident}", kid, "current", "completed"):
        assert said in done.stdout, said
    piped = verify("-", "--keys", str(keys), stdin=cert.read_bytes())
    assert piped.returncode == 0 and piped.stdout == done.stdout


def edited(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    document = json.loads(data)
    change(document)
    return json.dumps(document).encode()


def flip(text: str, index: int) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[index] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def test_offline_what_fails_a_check_exits_1_with_the_reason(
    collector: Collector, tmp_path: Path
) -> None:
    cert, keys, _ = issued(collector, tmp_path)
    data = cert.read_bytes()
    statement = json.loads(base64.b64decode(json.loads(data)["payload"]))
    kid = json.loads(data)["signatures"][0]["keyid"]
    key_file = tmp_path / "keys" / "signing.pem"
    changed = json.loads(json.dumps(statement))
    changed["predicate"]["run"]["success"] = not changed["predicate"]["run"]["success"]
    no_subject = json.loads(json.dumps(statement))
    no_subject["_type"] = "https://in-toto.io/Statement/v0.1"
    cases = {
        "payload byte": edited(data, lambda d: d.update(payload=flip(d["payload"], 40))),
        "signature byte": edited(
            data, lambda d: d["signatures"][0].update(sig=flip(d["signatures"][0]["sig"], 5))
        ),
        "unknown key": edited(data, lambda d: d["signatures"][0].update(keyid="0" * 16)),
        "digest mismatch": sealed(changed, key_file, kid),
        "not a statement": sealed(no_subject, key_file, kid),
        "payload not JSON": sealed(b"not json", key_file, kid),
    }
    for case, forged in cases.items():
        path = tmp_path / "forged.json"
        path.write_bytes(forged)
        done = verify(str(path), "--keys", str(keys))
        assert done.returncode == 1, (case, done.stdout, done.stderr)
        assert (done.stdout + done.stderr).strip(), case  # the reason
    core = predicate_core(changed["predicate"])
    changed["subject"][0]["digest"]["sha256"] = hashlib.sha256(rfc8785.dumps(core)).hexdigest()
    consistent = tmp_path / "consistent.json"
    consistent.write_bytes(sealed(changed, key_file, kid))
    assert (
        verify(str(consistent), "--keys", str(keys)).returncode == 0
    )  # offline: signed, consistent
    online = verify(str(consistent), "--url", collector.http_url)
    assert online.returncode == 1, online.stdout  # never issued: not in the log


def test_unusable_input_exits_2(collector: Collector, tmp_path: Path) -> None:
    cert, keys, _ = issued(collector, tmp_path)
    not_json, not_envelope = tmp_path / "a.txt", tmp_path / "b.json"
    not_json.write_text("this is not JSON")
    not_envelope.write_text(json.dumps({"hello": "world"}))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, never listening
        cases = [
            (str(not_json), "--keys", str(keys)),
            (str(not_envelope), "--keys", str(keys)),
            (str(tmp_path / "missing.json"), "--keys", str(keys)),
            (str(cert), "--url", closed),
        ]
        for args in cases:
            done = verify(*args)
            assert done.returncode == 2, (args, done.stdout, done.stderr)
            assert (done.stdout + done.stderr).strip(), args


def test_online_verify_finds_the_certificate_in_the_log_and_says_when_superseded(
    collector: Collector, tmp_path: Path
) -> None:
    spans = run_spans("online")
    send(collector, spans)
    collector.settle()
    ident = run_id(collector, spans)
    cert = tmp_path / "online.json"
    cert.write_bytes(envelope(collector, f"/runs/{ident}"))
    current = verify(str(cert), "--url", collector.http_url)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "superseded by" not in current.stdout
    late = SentSpan(
        spans[0].trace_id,
        os.urandom(8),
        "execute_tool late",
        parent=spans[1].span_id,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "late"},
    )
    send(collector, [late])
    collector.settle()
    payload = base64.b64decode(json.loads(envelope(collector, f"/runs/{ident}"))["payload"])
    old = verify(str(cert), "--url", collector.http_url)
    assert old.returncode == 0, old.stdout + old.stderr  # still valid, and in the log
    assert "superseded" in old.stdout and hashlib.sha256(payload).hexdigest() in old.stdout


def test_with_postgresql_and_no_signing_key_certificates_answer_503_saying_how(
    tmp_path: Path, database_url: str
) -> None:
    if not database_url.startswith("postgresql"):
        with running_collector(tmp_path, database_url=database_url) as c:
            key = tmp_path / "badge-signing-key.pem"  # beside the SQLite file
            assert key.stat().st_mode & 0o777 == 0o600
            private = serialization.load_pem_private_key(key.read_bytes(), password=None)
            assert isinstance(private, Ed25519PrivateKey)
            assert get(c, f"{API}/certificates/head").status_code == 200
        return
    with running_collector(tmp_path, database_url=database_url) as c:
        send(c, run_spans("nokey"))
        c.settle()
        [(ident,)] = c.query("SELECT id FROM runs")
        for path in (f"{API}/runs/{ident}/certificate", f"{API}/certificates/head"):
            reply = get(c, path)
            assert reply.status_code == 503, (path, reply.text)
            assert "signing-key" in reply.text or "SIGNING_KEY" in reply.text
        assert not list(tmp_path.glob("*.pem"))  # never created for a database server
