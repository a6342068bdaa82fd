"""Crash trials: SIGKILL a collector at a random moment of some work, restart
it, and check what docs/reliability.md promises (bench/crash.py runs the
matrix; test_crash_matrix.py a few trials in CI).

Kinds of work killed:
- load: exporters on both doors send traces (a root and its children);
- retention: a retention pass deletes spans older than a few seconds while
  exporters keep sending;
- migration: `badge-collector db upgrade` moves a loaded database from
  revision 0008 to the head;
- grade: graders post grades (some for stored runs, some ahead of theirs).

After each kill the collector restarts on the same database and the trial
checks: every acknowledged span and grade is stored; within RUNS_SETTLE_S
every trace's runs count exactly its stored spans (and a graded run shows
its grade); SQLite's `PRAGMA integrity_check` says ok; the restart answered
/readyz. A migration trial also checks that the upgrade finished with
nothing lost.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
from alembic import command
from sqlalchemy import Engine, create_engine, text

from bench.support.otlp import new_span_id, new_trace_id, request, span
from bench.support.servers import (
    HTTP_TRANSPORT_ERRORS,
    ExportRefused,
    OtlpClient,
    ServerProcess,
    cli,
    process_tree,
    start_server,
)
from collector.storage.engine import open_database
from collector.storage.migrate import _config, current_revision, head_revision

RUNS_SETTLE_S = 60.0  # a bound, not a figure: runs settle in a few seconds on an idle machine
KINDS = ("load", "retention", "migration", "grade")


@dataclass
class Trial:
    kind: str
    killed_after_s: float
    acked_spans: int = 0
    acked_grades: int = 0
    lost_spans: int = 0
    lost_grades: int = 0
    runs_consistent_after_s: float | None = None  # None: not within RUNS_SETTLE_S
    integrity: str = "ok"
    restarted: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return (
            self.lost_spans == 0
            and self.lost_grades == 0
            and self.runs_consistent_after_s is not None
            and self.integrity == "ok"
            and self.restarted
        )


def kill_hard(server: ServerProcess | subprocess.Popen[str]) -> None:
    """SIGKILL the process and the decoder processes it started."""
    proc = server.proc if isinstance(server, ServerProcess) else server
    for pid in process_tree(proc.pid):  # listed before any dies: orphans are not found
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if isinstance(server, ServerProcess):
        server.wait(30)  # and release its output pipe
    else:
        proc.wait(30)


class Acks:
    """What the collector acknowledged, with when (time.monotonic())."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[float, str, str]] = []  # (acked at, trace id, span id)
        self.grades: dict[tuple[str, str], bool] = {}  # (agent, run key) -> success
        self.pending: set[tuple[str, str]] = set()  # keys a grader has taken


def export_loop(
    door: str, server: ServerProcess, key: str, acks: Acks, stop: threading.Event
) -> None:
    """Traces of a root and 9 children, some split over two requests."""
    client = OtlpClient(server, key, timeout=10)
    rnd = random.Random()
    while not stop.is_set():
        trace_id, root = new_trace_id(), new_span_id()
        spans = [span(trace_id, root, "badge.run", attributes={"badge.task.id": "crash"})]
        spans += [span(trace_id, new_span_id(), "execute_tool t", parent=root) for _ in range(9)]
        parts = [spans] if rnd.random() < 0.5 else [spans[5:], spans[:5]]
        for part in parts:
            try:
                client.export(request(part, service="crash").SerializeToString(), door)
            except (*HTTP_TRANSPORT_ERRORS, grpc.RpcError, ExportRefused):
                time.sleep(0.05)
                break
            now = time.monotonic()
            with acks.lock:
                acks.spans.extend((now, trace_id.hex(), s.span_id.hex()) for s in part)
    client.close()


def grade_loop(server: ServerProcess, key: str, acks: Acks, stop: threading.Event) -> None:
    http = httpx.Client(base_url=f"http://127.0.0.1:{server.http_port}", timeout=10)
    rnd = random.Random()
    while not stop.is_set():
        with acks.lock:  # half for a stored run (a trace's run key is its id), half ahead;
            # never one key twice: two graders' answers cannot say which write came last
            known = acks.spans[-1][1] if acks.spans and rnd.random() < 0.5 else None
            run_key = known if known and ("crash", known) not in acks.pending else None
            run_key = run_key or new_trace_id().hex()
            acks.pending.add(("crash", run_key))
        success = rnd.random() < 0.5
        body = {"agent": "crash", "run_key": run_key, "success": success}
        try:
            reply = http.post(
                "/api/v1/grades", json=body, headers={"authorization": f"Bearer {key}"}
            )
        except httpx.HTTPError:
            time.sleep(0.05)
            continue
        if reply.status_code == 202:
            with acks.lock:
                acks.grades[("crash", run_key)] = success
    http.close()


def with_workers(
    server: ServerProcess, keys: dict[str, str], acks: Acks, grades: bool, seconds: float
) -> None:
    """Exporters (and graders) for `seconds` from their first acknowledgement, then the
    server is killed under them. Counted from the first answer, not from the start: on
    a busy machine the first export may take longer than the shortest trial, which then
    killed a server that had acknowledged nothing, and checked nothing."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=export_loop, args=(door, server, keys["agent"], acks, stop))
        for door in ("http", "grpc")
    ]
    if grades:
        threads += [
            threading.Thread(target=grade_loop, args=(server, keys["grader"], acks, stop))
            for _ in range(2)
        ]
    spans_before, grades_before = len(acks.spans), len(acks.grades)
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        len(acks.spans) > spans_before and (not grades or len(acks.grades) > grades_before)
    ):
        time.sleep(0.02)
    time.sleep(seconds)
    kill_hard(server)
    stop.set()
    for thread in threads:
        thread.join(30)


def run_trial(kind: str, url: str, rnd: random.Random) -> Trial:
    cli("db", "upgrade", "--database-url", url)  # keys create makes no database
    keys = {
        role: cli(
            "keys", "create", "--owner", "crash", "--role", role, "--database-url", url
        ).stdout.strip()
        for role in ("agent", "grader")
    }
    acks = Acks()
    retention_s = 4.0
    if kind == "migration":
        trial = Trial(kind, killed_after_s=rnd.uniform(0.8, 2.2))
        before = _migrate_killed(url, keys, acks, trial)
    elif kind == "retention":
        trial = Trial(kind, killed_after_s=rnd.uniform(0.5, 3.0))
        days = retention_s / 86400
        extra = ("--span-retention-days", f"{days:.10f}", "--retention-interval", "0.5")
        warm = start_server(url, *extra)
        with_workers(warm, keys, acks, False, retention_s + 1.0)  # old spans to delete
        server = start_server(url, *extra)  # its first pass starts at once
        with_workers(server, keys, acks, False, trial.killed_after_s)
    else:
        trial = Trial(kind, killed_after_s=rnd.uniform(0.3, 3.0))
        server = start_server(url)
        if kind == "grade":
            with_workers(server, keys, acks, False, 1.0)  # runs for some grades
            server = start_server(url)
        with_workers(server, keys, acks, kind == "grade", trial.killed_after_s)
    killed_at = time.monotonic()
    restarted = start_server(url)
    try:
        trial.restarted = _answers(restarted)
        _check_acks(url, acks, trial, killed_at - retention_s + 1.0 if kind == "retention" else 0)
        trial.runs_consistent_after_s = _runs_settle(url, kind == "retention", acks)
    finally:
        restarted.stop()
    trial.integrity = _integrity(url)
    if kind == "migration":
        _check_migrated(url, before, trial)
    return trial


def _answers(server: ServerProcess) -> bool:
    try:
        reply = httpx.get(f"http://127.0.0.1:{server.http_port}/readyz", timeout=10)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def _check_acks(url: str, acks: Acks, trial: Trial, spans_after: float) -> None:
    """Acked spans (acked after `spans_after`: retention may delete older ones)
    and acked grades, all stored."""
    must = {span_id for at, _, span_id in acks.spans if at >= spans_after}
    engine = create_engine(url)
    with engine.connect() as conn:
        stored = {row[0] for row in conn.execute(text("SELECT span_id FROM spans"))}
        graded = {
            (agent, key): bool(success)
            for agent, key, success in conn.execute(
                text("SELECT agent, run_key, success FROM grades")
            )
        }
    engine.dispose()
    trial.acked_spans, trial.acked_grades = len(must), len(acks.grades)
    trial.lost_spans = len(must - stored)
    trial.lost_grades = sum(1 for k, ok in acks.grades.items() if graded.get(k) != ok)


def _runs_settle(url: str, retained: bool, acks: Acks) -> float | None:
    """Seconds until every trace's runs count exactly its stored spans (after
    retention, only traces whose spans are all still stored are compared)."""
    started = time.monotonic()
    engine = create_engine(url)
    try:
        while time.monotonic() - started < RUNS_SETTLE_S:
            if _runs_match(engine, retained, acks):
                return time.monotonic() - started
            time.sleep(0.2)
        return None
    finally:
        engine.dispose()


def _runs_match(engine: Engine, retained: bool, acks: Acks) -> bool:
    with engine.connect() as conn:
        stored = dict(
            conn.execute(
                text(
                    "SELECT t.trace_id, count(*) FROM spans s JOIN traces t ON t.id = s.trace_ref "
                    "GROUP BY t.trace_id"
                )
            ).all()
        )
        counted = dict(
            conn.execute(text("SELECT trace_id, sum(span_count) FROM runs GROUP BY trace_id")).all()
        )
        graded = conn.execute(  # graded runs that do not show their grade
            text(
                "SELECT count(*) FROM grades g JOIN runs r ON r.id = g.run_id "
                "WHERE coalesce(r.success_source, '') != 'graded' OR r.success != g.success"
            )
        ).scalar_one()
    if graded:
        return False
    if retained:  # retention deletes spans, never runs: compare whole traces only
        recent = {trace for _, trace, _ in acks.spans}
        stored = {t: n for t, n in stored.items() if t in recent and n == 10}
        return all(counted.get(t) == n for t, n in stored.items())
    return all(counted.get(t) == n for t, n in stored.items()) and set(counted) <= set(stored)


def _integrity(url: str) -> str:
    if not url.startswith("sqlite"):
        return "ok"  # PostgreSQL: crash recovery is the server's own; the restart is the check
    engine = create_engine(url)
    with engine.connect() as conn:
        found = str(conn.execute(text("PRAGMA integrity_check")).scalar_one())
    engine.dispose()
    return found


def _counts(url: str) -> tuple[int, int, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        counts = tuple(
            int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in ("spans", "runs", "grades")
        )
    engine.dispose()
    return counts  # type: ignore[return-value]


def _migrate_killed(url: str, keys: dict[str, str], acks: Acks, trial: Trial) -> tuple[int, ...]:
    """A loaded database moved back to 0008, then `db upgrade` killed."""
    server = start_server(url)
    with_workers(server, keys, acks, True, 3.0)
    server = start_server(url)  # settle the runs the kill left pending
    _runs_settle(url, False, acks)
    server.stop()
    db = open_database(url)
    config = _config()
    with db.writer.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0008")
    db.dispose()
    before = _counts(url)
    log = Path(tempfile.mkdtemp()) / "upgrade.log"
    with log.open("w") as sink:
        upgrade = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "collector",
                "db",
                "upgrade",
                "--verbose",
                "--database-url",
                url,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(trial.killed_after_s)
        finished = upgrade.poll() is not None
        kill_hard(upgrade)
    steps = re.findall(r"Running upgrade (\w+) -> (\w+)", log.read_text())
    if finished:
        trial.notes.append("upgrade had finished")
    elif steps:
        trial.notes.append(f"killed during {steps[-1][0]} -> {steps[-1][1]}")
    else:
        trial.notes.append("killed before migrating")
    return before


def _check_migrated(url: str, before: tuple[int, ...], trial: Trial) -> None:
    db = open_database(url)
    at = current_revision(db)
    db.dispose()
    if at != head_revision():
        trial.integrity = f"revision {at}"
    if _counts(url) != before:
        trial.notes.append(f"counts {before} -> {_counts(url)}")
        trial.lost_spans += max(0, before[0] - _counts(url)[0])
