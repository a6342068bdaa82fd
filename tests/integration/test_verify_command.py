"""`badge-collector verify` (CERTS.md section 4): exit 0 valid, 1 invalid with
the reason, 2 unusable input; offline against a JWKS file and online with
--url (in the log? superseded?). And `signing-key rotate`: certificates
signed by the retired key still verify."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.certificates.dsse import HEAD_TYPE, STATEMENT_TYPE, seal
from collector.certificates.keyfile import read_key
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


def verify(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector", "verify", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    with running_collector(tmp_path, signing_key=str(tmp_path / "signing.pem")) as running:
        yield running


def issued(c: Collector, tmp_path: Path, name: str = "cert.json") -> tuple[Path, Path, str]:
    """A run certificate and the collector's JWKS on disk; and the run's id."""
    sent = send_run(c)
    c.settle()
    run_id = run_id_of(c, sent)
    path = tmp_path / name
    path.write_bytes(get(c, f"{API}/runs/{run_id}/certificate").content)
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(jwks(c)))
    return path, keys, run_id


def resigned(envelope: bytes, key_file: Path, edit: object) -> bytes:
    """The envelope's statement changed by `edit` and signed again by the real key."""
    statement = json.loads(base64.b64decode(json.loads(envelope)["payload"]))
    assert callable(edit)
    edit(statement)
    import rfc8785

    return seal(STATEMENT_TYPE, rfc8785.dumps(statement), read_key(key_file))


def test_offline_a_valid_certificate_exits_0_and_shows_its_figures(
    collector: Collector, tmp_path: Path
) -> None:
    cert, keys, run_id = issued(collector, tmp_path)
    done = verify(str(cert), "--keys", str(keys))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"valid run certificate: run:{run_id}" in done.stdout
    assert "status completed" in done.stdout and "(current)" in done.stdout
    piped = verify("-", "--keys", str(keys), stdin=cert.read_bytes())
    assert piped.returncode == 0 and piped.stdout == done.stdout


def test_offline_invalid_certificates_exit_1_with_the_reason(
    collector: Collector, tmp_path: Path
) -> None:
    cert, keys, _ = issued(collector, tmp_path)
    envelope = json.loads(cert.read_bytes())
    payload = bytearray(base64.b64decode(envelope["payload"]))
    payload[40] ^= 0x01
    flipped = tmp_path / "flipped.json"
    flipped.write_text(json.dumps({**envelope, "payload": base64.b64encode(payload).decode()}))
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[0] ^= 0x80
    bad_sig = tmp_path / "bad-sig.json"
    signatures = [{**envelope["signatures"][0], "sig": base64.b64encode(sig).decode()}]
    bad_sig.write_text(json.dumps({**envelope, "signatures": signatures}))
    no_keys = tmp_path / "empty-jwks.json"
    no_keys.write_text('{"keys": []}')
    key_file = tmp_path / "signing.pem"

    def lie(statement: dict[str, object]) -> None:
        statement["predicate"]["run"]["success"] = False  # type: ignore[index]

    mismatch = tmp_path / "mismatch.json"
    mismatch.write_bytes(resigned(cert.read_bytes(), key_file, lie))
    not_statement = tmp_path / "not-statement.json"
    not_statement.write_bytes(seal(STATEMENT_TYPE, b'{"hello":"world"}', read_key(key_file)))
    cases = {
        flipped: "bad signature",
        bad_sig: "bad signature",
        mismatch: "subject digest does not match",
        not_statement: "not an in-toto Statement",
    }
    for path, reason in cases.items():
        done = verify(str(path), "--keys", str(keys))
        assert done.returncode == 1, (path, done.stdout, done.stderr)
        assert reason in done.stdout, done.stdout
    unknown = verify(str(cert), "--keys", str(no_keys))
    assert unknown.returncode == 1 and "unknown key" in unknown.stdout


def test_unusable_input_exits_2(collector: Collector, tmp_path: Path) -> None:
    cert, keys, _ = issued(collector, tmp_path)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("this is not JSON")
    not_envelope = tmp_path / "object.json"
    not_envelope.write_text('{"payload": 3}')
    assert verify(str(garbage), "--keys", str(keys)).returncode == 2
    assert verify(str(not_envelope), "--keys", str(keys)).returncode == 2
    assert verify(str(tmp_path / "missing.json"), "--keys", str(keys)).returncode == 2
    assert verify(str(cert), "--keys", str(garbage)).returncode == 2
    assert verify(str(cert)).returncode == 2  # neither --keys nor --url
    gone = verify(str(cert), "--url", "http://127.0.0.1:9")  # nothing listens on port 9
    assert gone.returncode == 2 and "unreachable" in gone.stderr


def test_online_says_whether_it_is_in_the_log_and_whether_superseded(
    collector: Collector, tmp_path: Path
) -> None:
    url = collector.http_url
    first = send_run(collector)
    collector.settle()
    run_id = run_id_of(collector, first)
    old = tmp_path / "old.json"
    old.write_bytes(get(collector, f"{API}/runs/{run_id}/certificate").content)
    current = verify(str(old), "--url", url)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "in the log" in current.stdout and "entry 1" in current.stdout
    assert "current: no newer certificate" in current.stdout
    send_late_tool(collector, first)
    collector.settle()
    new = get(collector, f"{API}/runs/{run_id}/certificate").content
    superseded = verify(str(old), "--url", url)
    assert superseded.returncode == 0
    assert f"superseded by {statement_digest(new)}" in superseded.stdout

    def touch(statement: dict[str, object]) -> None:
        statement["predicate"]["issued_at"] = "2001-01-01T00:00:00Z"  # type: ignore[index]

    outside = tmp_path / "outside.json"
    outside.write_bytes(resigned(old.read_bytes(), tmp_path / "signing.pem", touch))
    done = verify(str(outside), "--url", url)
    assert done.returncode == 1 and "not in the log" in done.stdout


def test_online_a_kept_head_shows_the_log_only_grew(collector: Collector, tmp_path: Path) -> None:
    url = collector.http_url
    issued(collector, tmp_path)
    head = tmp_path / "head.json"
    head.write_bytes(get(collector, f"{API}/certificates/head").content)
    issued(collector, tmp_path, "second.json")
    done = verify(str(head), "--url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid log head: 1 entries" in done.stdout and "2 entries now" in done.stdout
    forged_payload = json.dumps(
        {
            "_type": "urn:badge-collector:log-head:v1",
            "chain": "f" * 64,
            "issued_at": "2030-01-01T00:00:00Z",
            "size": 1,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    forged = tmp_path / "forged-head.json"
    forged.write_bytes(seal(HEAD_TYPE, forged_payload, read_key(tmp_path / "signing.pem")))
    rewritten = verify(str(forged), "--url", url)
    assert rewritten.returncode == 1 and "no longer has this chain" in rewritten.stdout


def test_rotation_retires_the_old_key_and_its_certificates_still_verify(
    collector: Collector, tmp_path: Path
) -> None:
    key_file = tmp_path / "signing.pem"
    old_kid = read_key(key_file).kid
    cert, _, _ = issued(collector, tmp_path)
    database = f"sqlite:///{collector.db_path}"
    done = subprocess.run(
        [sys.executable, "-m", "collector", "signing-key", "rotate"]
        + ["--signing-key", str(key_file), "--database-url", database],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    new_kid = read_key(key_file).kid
    assert done.stdout.split() == ["retired", old_kid, "current", new_kid]
    kept = tmp_path / f"signing.pem.{old_kid}.retired"
    assert read_key(kept).kid == old_kid and kept.stat().st_mode & 0o777 == 0o600
    assert key_file.stat().st_mode & 0o777 == 0o600
    keys = jwks(collector)
    assert [k["kid"] for k in keys["keys"]] == [new_kid, old_kid]  # current first
    assert "badge:retired_at" in keys["keys"][1] and "badge:retired_at" not in keys["keys"][0]
    assert verified(cert.read_bytes(), keys)  # still valid, by the spec's own check
    old = verify(str(cert), "--url", collector.http_url)
    assert old.returncode == 0 and f"{old_kid} (retired at" in old.stdout
    sent = send_run(collector)  # the running collector signs with the new key at once
    collector.settle()
    fresh = get(collector, f"{API}/runs/{run_id_of(collector, sent)}/certificate").content
    assert json.loads(fresh)["signatures"][0]["keyid"] == new_kid
    assert verified(fresh, jwks(collector))
