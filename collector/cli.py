"""`badge-collector`: serve, keys, screen, and the read commands.

Settings come from BADGE_* variables; flags win. The CLI is the only place a
Settings object is built.
"""

from __future__ import annotations

import argparse
import logging
import select
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

from collector.settings import Settings

# flag -> settings field; every setting has a `serve` flag (docs/operations.md "Settings").
SERVE_FLAGS: dict[str, tuple[str, type]] = {
    "--database-url": ("database_url", str),
    "--host": ("host", str),
    "--allowed-hosts": ("allowed_hosts", str),
    "--grpc-port": ("grpc_port", int),
    "--http-port": ("http_port", int),
    "--run-timeout": ("run_timeout_s", float),
    "--max-run-latency": ("max_run_latency_s", float),
    "--max-agents-per-owner": ("max_agents_per_owner", int),
    "--orphan-grace": ("orphan_grace_s", float),
    "--max-body-bytes": ("max_body_bytes", int),
    "--max-spans-per-request": ("max_spans_per_request", int),
    "--max-inflight-bytes": ("max_inflight_bytes", int),
    "--max-connections": ("max_connections", int),
    "--header-timeout": ("header_timeout_s", float),
    "--body-timeout": ("body_timeout_s", float),
    "--idle-timeout": ("idle_timeout_s", float),
    "--grpc-max-concurrent-exports": ("grpc_max_concurrent_exports", int),
    "--max-concurrent-reads": ("max_concurrent_reads", int),
    "--max-waiting-reads": ("max_waiting_reads", int),
    "--queue-max-spans": ("queue_max_spans", int),
    "--span-retention-days": ("span_retention_days", float),
    "--retention-interval": ("retention_interval_s", float),
    "--grade-wait-days": ("grade_wait_days", float),
    "--grade-quota-bytes": ("grade_quota_bytes", int),
    "--sqlite-synchronous": ("sqlite_synchronous", str),
    "--assembly-delay": ("assembly_delay_s", float),
    "--sweep-interval": ("sweep_interval_s", float),
    "--decode-workers": ("decode_workers", int),
    "--metrics-max-agents": ("metrics_max_agents", int),
    "--metrics-window-days": ("metrics_window_days", float),
    "--metrics-refresh": ("metrics_refresh_s", float),
    "--log-level": ("log_level", str),
    "--signing-key": ("signing_key", str),
    "--conventions": ("conventions", str),
}
# Flags given once per value, each adding one (CONVENTIONS.md section 4).
REPEATED_FLAGS = frozenset({"--conventions"})


def settings_from(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    for field, _ in SERVE_FLAGS.values():
        value = getattr(args, field, None)
        if value is not None:
            overrides[field] = value
    if getattr(args, "insecure", False):
        overrides["insecure"] = True
    return Settings(**overrides)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="badge-collector", description="OTLP trace collector that scores AI agents."
    )
    parser.add_argument(
        "--verbose", action="store_true", help="log at BADGE_LOG_LEVEL (INFO) for any command"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start the OTLP doors and the read API")
    for flag, (field, kind) in SERVE_FLAGS.items():
        action = "append" if flag in REPEATED_FLAGS else "store"
        serve.add_argument(flag, dest=field, type=kind, default=None, action=action)
    serve.add_argument("--insecure", action="store_true", help="keyless ingest into `local`")

    keys = sub.add_parser("keys", help="manage ingest keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key and print it once")
    create.add_argument("--owner", required=True)
    create.add_argument("--role", choices=["agent", "grader"], default="agent")
    keys_sub.add_parser("list", help="list keys (never the secrets)")
    revoke = keys_sub.add_parser("revoke", help="revoke a key by id or prefix")
    revoke.add_argument("key")
    for command in (create, keys_sub.choices["list"], revoke):
        command.add_argument("--database-url", dest="database_url", default=None)

    db = sub.add_parser("db", help="database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_upgrade = db_sub.add_parser("upgrade", help="apply the Alembic migrations")
    db_upgrade.add_argument("--database-url", dest="database_url", default=None)

    from collector.command_args import add_certificate_commands, add_read_commands
    from collector.convention_commands import add_convention_commands
    from collector.demo_agent.command import add_demo_agent_command
    from collector.reclassify_command import add_reclassify_command
    from collector.screening.command import add_screen_command

    add_read_commands(sub)
    add_certificate_commands(sub)
    add_screen_command(sub)
    add_demo_agent_command(sub)
    add_convention_commands(sub)
    add_reclassify_command(sub)
    for command in _commands(sub):  # `badge-collector agents --verbose` works too
        command.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS)
    return parser


def _commands(sub: Any) -> list[argparse.ArgumentParser]:
    """Every (sub)command's parser, nested ones included."""
    found: list[argparse.ArgumentParser] = []
    for parser in dict.fromkeys(sub.choices.values()):
        found.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found.extend(_commands(action))
    return found


def log_level(args: argparse.Namespace, settings: Settings) -> str:
    """`serve` logs at the configured level; every other command prints only its
    answer (warnings and errors still show) unless --verbose or BADGE_LOG_LEVEL
    asks for more. Alembic alone printed nine INFO lines before each answer."""
    if args.command == "serve" or args.verbose or "log_level" in settings.model_fields_set:
        return settings.log_level.upper()
    return "WARNING"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = settings_from(args)
    logging.basicConfig(
        level=log_level(args, settings), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from collector.storage.engine import NoDatabase

    try:
        return dispatch(args, settings)
    except NoDatabase as exc:  # only serve and db upgrade create a database
        print(f"error: {exc}", file=sys.stderr)
        return 2


def dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        return serve(settings)
    if args.command == "keys":
        return keys_command(args, settings)
    if args.command == "db":
        return db_command(settings)
    if args.command == "screen":
        from collector.screening.session import run as run_screen

        return run_screen(args)
    if args.command == "verify":
        from collector.certify import run_verify

        return run_verify(args)
    if args.command == "signing-key":
        from collector.certify import run_signing_key

        return run_signing_key(args, settings)
    if args.command == "demo-agent":
        from collector.demo_agent.command import run_demo_agent

        return run_demo_agent(args)
    if args.command == "conventions":
        from collector.convention_commands import run_conventions_command

        return run_conventions_command(args, settings)
    if args.command == "reclassify":
        from collector.reclassify_command import run_reclassify

        return run_reclassify(args, settings)
    from collector.commands import run_read_command

    return run_read_command(args, settings)


def db_command(settings: Settings) -> int:
    from collector.storage.engine import open_database
    from collector.storage.migrate import current_revision, upgrade

    db = open_database(settings.database_url, synchronous=settings.sqlite_synchronous)
    upgrade(db)
    print(f"database at revision {current_revision(db)}", file=sys.stderr)
    db.dispose()
    return 0


def keys_command(args: argparse.Namespace, settings: Settings) -> int:
    from collector.storage.engine import describe, open_existing
    from collector.storage.keys import KeyStore
    from collector.storage.migrate import create_schema

    db = open_existing(settings.database_url, synchronous=settings.sqlite_synchronous)
    print(f"database: {describe(settings.database_url)}", file=sys.stderr)
    create_schema(db)
    store = KeyStore(db)
    if args.keys_command == "create":
        try:
            key = store.create(args.owner, args.role)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(key)
        print(
            f"Key for owner {args.owner!r} (role {args.role}). It is shown once; store it now.",
            file=sys.stderr,
        )
        return 0
    if args.keys_command == "list":
        print(f"{'id':>4}  {'prefix':<12}  {'owner':<20}  {'role':<6}  status")
        for info in store.list():
            status = "revoked" if info.revoked_at else "active"
            print(f"{info.id:>4}  {info.prefix:<12}  {info.owner:<20}  {info.role:<6}  {status}")
        return 0
    revoked = store.revoke(args.key)
    if not revoked:
        print(f"error: no active key matches {args.key!r}", file=sys.stderr)
        return 1
    print(f"revoked {revoked} key(s)", file=sys.stderr)
    return 0


def serve(settings: Settings) -> int:
    from api.auth import INSECURE_OWNER
    from collector.certificates.keyfile import KeyFileError
    from collector.conventions import ConventionError
    from collector.service import PortInUse, build

    try:
        service = build(settings)
    except KeyFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ConventionError as exc:  # before any door opens (CONVENTIONS.md section 4)
        print("error: convention files do not load:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    _say_signing(service)
    if settings.insecure:
        print(
            "WARNING: --insecure: ingest without a key goes to owner 'local' and every read "
            "is open, traces included. Use this on a laptop only.",
            file=sys.stderr,
        )
    first_key = None if settings.insecure else service.keys.create_first(INSECURE_OWNER)
    stop_signals = _StopSignals()
    try:
        service.start()
    except PortInUse as exc:
        print(f"error: {exc}", file=sys.stderr)
        service.db.dispose()
        return 2
    if first_key is not None:  # after start: the ports printed are the bound ones
        _print_first_key(first_key, settings.host, service.http_port, service.grpc_port)
    print(f"OTLP/gRPC listening on {settings.host}:{service.grpc_port}", flush=True)
    print(f"OTLP/HTTP and API listening on http://{settings.host}:{service.http_port}", flush=True)
    stop_signals.wait()
    print("shutting down: draining the ingest queue", file=sys.stderr, flush=True)
    service.stop()
    return 0


class _StopSignals:
    """SIGTERM and SIGINT, caught from before the doors open until the process ends.

    Caught before `start()`: the doors' lines are how supervisors and tests
    know the collector is up, and a signal sent on seeing them, before the
    handlers were set, killed the process instead of stopping it (exit -15).

    The handler only records the signal, and takes no lock: Python runs it in
    the main thread between two bytecodes, and the one this replaced (an
    Event's set() while the main thread sat in that Event's wait()) could run
    while the main thread held the Event's lock, and then waited for it for
    ever: `serve` ignored a SIGTERM now and then (issue 43). The kernel may
    hand the signal to any thread; the wakeup fd wakes the main thread at once.
    """

    def __init__(self) -> None:
        self.received: list[int] = []
        self._wake, self._woken = socket.socketpair()
        self._wake.setblocking(False)
        signal.set_wakeup_fd(self._wake.fileno(), warn_on_full_buffer=False)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, _frame: self.received.append(signum))

    def wait(self) -> None:
        while not self.received:
            if select.select([self._woken], [], [], 1.0)[0]:
                self._woken.recv(64)


def _say_signing(service: Any) -> None:
    """Once: a signing key made now, or why certificates cannot be signed."""
    key_file = service.signing_key
    if key_file is not None and key_file.created:
        print(
            f"Created the signing key {key_file.path} (kid {key_file.current().kid}, mode "
            "0600): it signs certificates. Back it up; see docs/certificates.md.",
            file=sys.stderr,
            flush=True,
        )
    if service.signing_refused is not None:
        print(f"note: certificates answer 503: {service.signing_refused}", file=sys.stderr)


def _print_first_key(key: str, bound_host: str, http_port: int, grpc_port: int) -> None:
    host = "127.0.0.1" if bound_host in ("0.0.0.0", "::") else bound_host
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address in a URL
    # Lines a shell runs as they are: without `export` a pasted assignment
    # stays in the shell and the agent it starts sees none of it.
    print(
        "First start: created an ingest key for owner 'local'. It is shown ONCE; keep it.\n"
        "Paste these into the shell that starts your agent:\n"
        f"  export OTEL_EXPORTER_OTLP_ENDPOINT=http://{host}:{http_port}\n"
        f'  export OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer {key}"\n'
        "  # or, for OTLP/gRPC, then also:\n"
        f"  #   export OTEL_EXPORTER_OTLP_ENDPOINT=http://{host}:{grpc_port}"
        " OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
        flush=True,
    )
