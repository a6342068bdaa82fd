"""`badge-collector verify` and `badge-collector signing-key rotate` (docs/certificates.md).

`verify FILE [--keys JWKS] [--url URL]` checks a certificate or a log head
(collector.certificates.verify) against a JWKS file, or the collector's
own at URL/.well-known/jwks.json; with --url it also asks the collector's
log whether the certificate is there and whether a newer one superseded it
(for a head: whether the log still holds it, so it only grew). Exit 0
valid, 1 invalid with the reason, 2 unusable input (CERTS.md section 4).

`signing-key rotate` writes a new key to the key file, keeps the old one
beside it as FILE.<kid>.retired, and records both in the database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from collector.certificates.keyfile import (
    DEFAULT_NAME,
    KeyFileError,
    read_key,
    replace_key,
    retired_path,
)
from collector.certificates.keys import generate
from collector.certificates.verify import Invalid, Unusable, Verified, verify
from collector.settings import Settings

VALID, INVALID, UNUSABLE = 0, 1, 2


class _Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def run_verify(args: argparse.Namespace) -> int:
    try:
        data = _read(args.file)
        jwks = _keys(args.keys, args.url)
        try:
            found = verify(data, jwks)
        except Unusable as exc:
            raise _Stop(UNUSABLE, f"unusable: {exc}") from None
        except Invalid as exc:
            raise _Stop(INVALID, f"INVALID: {exc}") from None
        for line in describe(found):
            print(line)
        return _online(args.url, found) if args.url else VALID
    except _Stop as stop:
        print(str(stop), file=sys.stderr if stop.code == UNUSABLE else sys.stdout)
        return stop.code


def _read(name: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise _Stop(UNUSABLE, f"unusable: cannot read {name}: {exc.strerror}") from None


def _get(url: str) -> httpx.Response:
    try:
        return httpx.get(url, timeout=10)
    except httpx.HTTPError as exc:
        raise _Stop(UNUSABLE, f"unusable: {url} is unreachable ({exc})") from None


def _keys(path: str | None, url: str | None) -> Any:
    if path is not None:
        try:
            return json.loads(Path(path).read_bytes())
        except OSError as exc:
            raise _Stop(UNUSABLE, f"unusable: cannot read {path}: {exc.strerror}") from None
        except ValueError:
            raise _Stop(UNUSABLE, f"unusable: {path} is not JSON") from None
    if url is None:
        raise _Stop(UNUSABLE, "unusable: give the keys: --keys JWKS or --url URL")
    reply = _get(f"{url.rstrip('/')}/.well-known/jwks.json")
    if reply.status_code != 200:
        raise _Stop(UNUSABLE, f"unusable: {reply.url} answered {reply.status_code}")
    try:
        return reply.json()
    except ValueError:
        raise _Stop(UNUSABLE, f"unusable: {reply.url} is not JSON") from None


def _online(url: str, found: Verified) -> int:
    base = url.rstrip("/")
    if found.kind == "log-head":
        return _head_online(base, found.body)
    reply = _get(f"{base}/api/v1/certificates/{found.statement_digest}")
    if reply.status_code == 404:
        print(f"INVALID: not in the log of {base}")
        return INVALID
    if reply.status_code != 200:
        raise _Stop(UNUSABLE, f"unusable: {reply.url} answered {reply.status_code}")
    status = reply.json()
    entry = status["entry"]
    print(f"  in the log of {base}: entry {entry['n']}, issued {entry['issued_at']}")
    newer = status["superseded_by"]
    print(f"  superseded by {newer}" if newer else "  current: no newer certificate supersedes it")
    return VALID


def _head_online(base: str, head: Mapping[str, Any]) -> int:
    size, chain = int(head["size"]), str(head["chain"])
    if size == 0:
        print("  an empty log: nothing to compare")
        return VALID
    reply = _get(f"{base}/api/v1/certificates/log?after={size - 1}&limit=1")
    if reply.status_code != 200:
        raise _Stop(UNUSABLE, f"unusable: {reply.url} answered {reply.status_code}")
    page = reply.json()
    items = page["items"]
    if not items or items[0]["chain"] != chain:
        print(f"INVALID: the log of {base} no longer has this chain at entry {size}")
        return INVALID
    print(f"  the log of {base} still holds it: it only grew ({page['size']} entries now)")
    return VALID


def _number(value: Any, digits: int = 1) -> str:
    return "-" if not isinstance(value, int | float) else f"{value:.{digits}f}"


def _text(value: Any) -> str:
    """As the JSON says it: true, false, null, or the value."""
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)


def describe(found: Verified) -> list[str]:
    """What a reader wants to see first: kind, subject, main figures, the key."""
    body = found.body
    key = f"retired at {found.retired_at}" if found.retired_at else "current"
    if found.kind == "log-head":
        return [
            f"valid log head: {body['size']} entries, chain {body['chain']}",
            f"  signed {body.get('issued_at')} by key {found.kid} ({key})",
        ]
    lines = [
        f"valid {found.kind} certificate: {found.subject}",
        f"  issued {body.get('issued_at')} by key {found.kid} ({key})",
    ]
    if found.kind == "run":
        run, spans = body.get("run") or {}, body.get("spans") or {}
        lines.append(
            f"  status {run.get('status')}, success {_text(run.get('success'))} "
            f"({_text(run.get('success_source'))}), latency {_number(run.get('latency_ms'))} ms, "
            f"steps {_text(run.get('steps'))}, cost {_text(run.get('cost_usd'))} "
            f"({_text(run.get('cost_source'))})"
        )
        lines.append(f"  spans {spans.get('count')}, digest {spans.get('digest')}")
    elif found.kind == "screening":
        scores, suite = body.get("scores") or {}, body.get("suite") or {}
        lines.append(
            f"  agent {(body.get('agent') or {}).get('name')}, suite {suite.get('name')} "
            f"({suite.get('tasks')} tasks, {suite.get('rounds')} rounds), composite "
            f"{_number(scores.get('composite'), 2)}, {scores.get('verified_state')}, "
            f"{len(body.get('runs') or [])} runs"
        )
    else:
        composite = body.get("composite") or {}
        lines.append(
            f"  agent {(body.get('agent') or {}).get('name')}, composite "
            f"{_number(composite.get('composite_score'), 2)}, {body.get('verified_state')}, "
            f"{body.get('runs_counted')} runs counted, "
            f"{len(body.get('screenings') or [])} screening certificate(s)"
        )
    if body.get("supersedes"):
        lines.append(f"  supersedes {body['supersedes']}")
    lines.append(f"  statement digest {found.statement_digest}")
    return lines


def run_signing_key(args: argparse.Namespace, settings: Settings) -> int:
    from collector.storage.certificates import recording_rotation
    from collector.storage.engine import describe, open_existing
    from collector.storage.migrate import create_schema

    # Like every command but serve and db upgrade: an existing database only
    # (NoDatabase is exit 2 in cli.dispatch).
    db = open_existing(settings.database_url, synchronous=settings.sqlite_synchronous)
    print(f"database: {describe(settings.database_url)}", file=sys.stderr)
    try:
        create_schema(db)
        if settings.signing_key:
            path = Path(settings.signing_key).expanduser()
        elif db.folder is not None:
            path = db.folder / DEFAULT_NAME
        else:
            print("error: give the key file: --signing-key FILE", file=sys.stderr)
            return 2
        try:
            old = read_key(path) if path.exists() else None
            new = generate()
            with recording_rotation(db, old, new, time.time()):
                replace_key(path, old, new)
        except KeyFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    finally:
        db.dispose()
    if old is not None:
        print(f"retired {old.kid}")
        print(
            f"  kept as {retired_path(path, old.kid)}; certificates it signed still verify",
            file=sys.stderr,
        )
    print(f"current {new.kid}")
    print(
        f"  in {path}: running collectors sign with it from their next certificate", file=sys.stderr
    )
    return 0
