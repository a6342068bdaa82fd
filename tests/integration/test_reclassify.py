"""History follows the rules (CONVENTIONS.md section 5): runs stored before a
convention file was given count right once it is, through a restarted
server (in the background) or `badge-collector reclassify` on a stopped one;
a server killed mid-way finishes after its restart; two servers on one
database do it once; and recognising every recording again from storage
gives exactly what ingest gave.

The family is test_conventions' made-up "acme": the built-ins recognise
none of its roles, so its runs count 0 steps until its file is given.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import create_engine, text

from bench.support.otlp import new_span_id, request, span
from bench.support.servers import OtlpClient, cli, start_server
from collector.assembly.recognise import selection
from collector.conventions import builtin_set, load_active
from collector.ingest.decoding import recognising
from collector.runs.reclassify import Reclassifier
from collector.storage.read_side import run_timers
from collector.storage.tables import runs as runs_table
from tests.corpus import SCENARIOS
from tests.integration.harness import FakeClock, running_collector
from tests.integration.replay import replay_scenarios, send_as_recorded
from tests.integration.test_conventions import ACME, acme_trace
from tests.schemas import sqlite_copy_at_head
from tests.untraced import untraced
from tests.waiting import POLL_S, wait_for

pytestmark = pytest.mark.timing


@pytest.fixture
def acme_file(tmp_path: Path) -> Path:
    path = tmp_path / "acme.yaml"
    path.write_text(ACME)
    return path


def acme_digest(acme_file: Path) -> str:
    return load_active([str(acme_file)]).digest


def acme_traces(count: int, first: int = 0, agent: str = "acme-agent") -> bytes:
    """One request of `count` acme runs of one agent, tasks acme-<n>."""
    message = ExportTraceServiceRequest()
    for n in range(first, first + count):
        message.MergeFrom(ExportTraceServiceRequest.FromString(acme_trace(f"acme-{n}")[1]))
    for resource_spans in message.resource_spans:
        resource_spans.resource.attributes[0].value.string_value = agent  # service.name
    return message.SerializeToString()


def query(database_url: str, sql: str) -> list[tuple[Any, ...]]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql))]
    finally:
        engine.dispose()


def counted(database_url: str) -> dict[tuple[int | None, str | None], int]:
    """(steps, conventions digest) -> runs."""
    rows = query(database_url, "SELECT steps, conventions_digest, count(*) FROM runs GROUP BY 1, 2")
    return {(steps, digest): count for steps, digest, count in rows}


def ingest_without_the_file(
    database_url: str, runs: int, per_request: int = 100, others: int = 0
) -> str:
    """`runs` acme runs (and `others` of another agent) stored by a server
    given no acme file; the key. The database is at the newest schema."""
    key = cli("keys", "create", "--owner", "me", "--database-url", database_url).stdout.strip()
    server = start_server(database_url, "--decode-workers", "1")
    try:
        client = OtlpClient(server, key)
        for first in range(0, runs, per_request):
            client.export(acme_traces(min(per_request, runs - first), first), "http")
        if others:
            client.export(acme_traces(others, runs, agent="other-agent"), "grpc")
        client.close()
        builtin, total = builtin_set().digest, runs + others
        wait_for(lambda: counted(database_url) == {(None, builtin): total}, what=f"{total} runs")
    finally:
        assert server.stop() == 0
    return key


def test_runs_stored_before_a_familys_file_count_right_after_a_restart_with_it(
    database_url: str, acme_file: Path
) -> None:
    ingest_without_the_file(database_url, 3)
    digest = acme_digest(acme_file)
    server = start_server(database_url, env={"BADGE_CONVENTIONS": str(acme_file)})
    try:
        wait_for(lambda: counted(database_url) == {(2, digest): 3}, what="3 runs of 2 steps")
        assert wait_for(lambda: server.metric("badge_runs_reclassified_total")) == 3
        assert server.metric("badge_runs_reclassify_remaining") == 0
        said = "reclassification done: 3 runs"
        wait_for(lambda: said in "".join(server.output), what="the log line")
    finally:
        assert server.stop() == 0
    tokens = query(
        database_url, "SELECT DISTINCT llm_calls, input_tokens, unrecognised_spans FROM runs"
    )
    assert tokens == [(2, 22, 1)]


def test_reclassify_on_a_stopped_server_counts_old_runs_right_one_agent_or_all(
    database_url: str, acme_file: Path
) -> None:
    ingest_without_the_file(database_url, 4, others=2)
    digest, builtin = acme_digest(acme_file), builtin_set().digest
    given = ("--database-url", database_url, "--conventions", str(acme_file))
    other = cli("reclassify", *given, "--agent", "somebody-else", check=False)
    assert other.returncode == 2 and "no agent" in other.stderr
    done = cli("reclassify", *given, "--agent", "acme-agent")  # by name
    assert "reclassified 4 runs" in done.stdout
    assert counted(database_url) == {(2, digest): 4, (None, builtin): 2}
    ((other_id,),) = query(database_url, "SELECT id FROM agents WHERE name = 'other-agent'")
    by_id = cli("reclassify", *given, "--agent", other_id)
    assert "reclassified 2 runs" in by_id.stdout
    again = cli("reclassify", *given)
    assert "reclassified 0 runs" in again.stdout
    # Without the file the built-ins decide again: the runs go back to no steps.
    back = cli("reclassify", "--database-url", database_url)
    assert "reclassified 6 runs" in back.stdout
    assert counted(database_url) == {(None, builtin): 6}


def test_reclassify_refuses_bad_arguments_with_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    assert cli("reclassify", "--no-such-flag", check=False).returncode == 2
    assert cli("reclassify", "--database-url", url, check=False).returncode == 2  # no database
    broken = tmp_path / "broken.yaml"
    broken.write_text("convention: broken\nversion: 0\n")
    refused = cli("reclassify", "--conventions", str(broken), check=False)
    assert refused.returncode == 2 and "broken.yaml" in refused.stderr


def test_a_server_killed_or_a_command_interrupted_mid_reclassification_resumes_and_finishes(
    tmp_path: Path, acme_file: Path
) -> None:
    url = sqlite_copy_at_head(tmp_path / "killed.db")
    runs = 1500
    ingest_without_the_file(url, runs, per_request=250)
    digest = acme_digest(acme_file)
    extra = ("--conventions", str(acme_file), "--decode-workers", "1")
    server = start_server(url, *extra)
    try:
        wait_for(
            lambda: server.metric("badge_runs_reclassified_total") >= 50,
            what="a batch",
            every=POLL_S,
        )
    finally:
        server.proc.send_signal(signal.SIGKILL)
        server.wait()
    halfway = counted(url)
    assert 0 < halfway.get((2, digest), 0) < runs  # newest first, stopped mid-way
    newest = query(url, "SELECT conventions_digest FROM runs ORDER BY seq DESC LIMIT 1")
    assert newest == [(digest,)]
    server = start_server(url, *extra)
    try:
        wait_for(lambda: counted(url) == {(2, digest): runs}, what="every run", timeout=120)
    finally:
        assert server.stop() == 0
    # And the command: Ctrl-C mid-way exits 130 after its batch; run again, it finishes.
    builtin = builtin_set().digest
    command = subprocess.Popen(
        [sys.executable, "-m", "collector", "reclassify", "--database-url", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: counted(url).get((None, builtin), 0) >= 50, what="a batch", every=0.005)
    finally:
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=60)
    assert command.returncode == 130, out + err
    assert "run the command again" in err
    assert 0 < counted(url).get((None, builtin), 0) < runs
    assert "left" in cli("reclassify", "--database-url", url).stdout
    assert counted(url) == {(None, builtin): runs}


# PostgreSQL only: one SQLite file has one server.
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_two_servers_on_one_database_reclassify_once(database_url: str, acme_file: Path) -> None:
    runs = 400
    ingest_without_the_file(database_url, runs)
    digest = acme_digest(acme_file)
    extra = ("--conventions", str(acme_file), "--decode-workers", "1")
    servers = [start_server(database_url, *extra) for _ in range(2)]
    try:
        wait_for(lambda: counted(database_url) == {(2, digest): runs}, what="every run")
        done = [s.metric("badge_runs_reclassified_total") for s in servers]
    finally:
        for server in servers:
            assert server.stop() == 0
    assert sorted(done) == [0, runs]


def test_ingest_and_reclassification_select_the_same_attributes(acme_file: Path) -> None:
    for conventions in (builtin_set(), load_active([str(acme_file)])):
        assert selection(conventions) == recognising(conventions).selection


SPAN_SQL = "SELECT id, role, rule, facts FROM spans ORDER BY id"
RUN_SQL = "SELECT * FROM runs ORDER BY id"


def test_every_recording_recognised_again_from_storage_equals_what_ingest_gave(
    tmp_path: Path, database_url: str
) -> None:
    clock = FakeClock()
    with running_collector(tmp_path, clock, database_url=database_url) as c:
        with untraced():  # the senders; the collector and the reclassifier are traced
            replay_scenarios(SCENARIOS, lambda payload: send_as_recorded(c, payload))
            c.settle()
        spans, stored_runs = c.query(SPAN_SQL), c.query(RUN_SQL)
        assert len(spans) > 1000 and len(stored_runs) > 100
        c.execute("UPDATE runs SET conventions_digest = 'an-old-digest'")
        service = c.service
        work = Reclassifier(
            service.db,
            service.conventions,
            run_timers(service.settings),
            clock,
            service.writer,
            paused=service.recomputer.paused,
        )
        progress = work.run()
        assert (progress.done, progress.reclassified) == (True, len(stored_runs))
        assert c.query(SPAN_SQL) == spans
        assert _without_times(c.query(RUN_SQL)) == _without_times(stored_runs)


def _without_times(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Runs as compared: all but the write time and the SQLite index bookkeeping."""
    skip = {_COLUMNS.index("updated_at"), _COLUMNS.index("merged")}
    return [tuple(v for i, v in enumerate(row) if i not in skip) for row in rows]


_COLUMNS = [column.name for column in runs_table.columns]


def test_sealed_runs_and_runs_without_spans_keep_their_counts_and_are_counted(
    tmp_path: Path, acme_file: Path
) -> None:
    with running_collector(tmp_path) as c:
        traces = {}
        for n in range(3):
            traces[n], body = acme_trace(f"acme-{n}")
            assert c.post(body).status_code == 200
        wait_for(lambda: c.query("SELECT count(*) FROM runs") == [(3,)])
        c.settle()
        c.execute("UPDATE runs SET sealed_at = 1 WHERE task_id = 'acme-0'")
        # Spans a retention before sealing existed removed: the run is not sealed.
        c.execute(f"DELETE FROM spans WHERE trace_id = '{traces[2]}'")
        service = c.service
        work = Reclassifier(
            service.db,
            load_active([str(acme_file)]),
            run_timers(service.settings),
            time.time,
            service.writer,
            paused=service.recomputer.paused,
        )
        progress = work.run()
        assert (progress.reclassified, progress.sealed, progress.remaining) == (1, 2, 0)
        assert sorted(c.query("SELECT task_id, steps, sealed_at IS NOT NULL FROM runs")) == [
            ("acme-0", None, True),
            ("acme-1", 2, False),
            ("acme-2", None, True),
        ]
        ((agent_id,),) = c.query("SELECT DISTINCT agent_id FROM runs")
        listed = c.http.get(
            f"{c.http_url}/api/v1/runs",
            params={"agent_id": agent_id},
            headers={"authorization": f"Bearer {c.key}"},
        )
        shown = {run["task_id"]: run["sealed"] for run in listed.json()["items"]}
        assert shown == {"acme-0": True, "acme-1": False, "acme-2": True}
        pages = {
            run["task_id"]: c.http.get(f"{c.http_url}/runs/{run['id']}").text
            for run in listed.json()["items"]
        }
        assert 'id="sealed"' in pages["acme-0"] and 'id="sealed"' not in pages["acme-1"]


def test_a_late_span_leaves_a_run_of_other_conventions_marked_for_reclassification(
    tmp_path: Path,
) -> None:
    """The recomputer stores a trace from its spans' stored recognition: a
    run whose older spans were recognised under other conventions keeps that
    digest, so reclassification still finds it."""
    with running_collector(tmp_path) as c:
        trace_id, body = acme_trace("acme-late")
        assert c.post(body).status_code == 200
        wait_for(lambda: c.query("SELECT count(*) FROM runs") == [(1,)])
        c.settle()
        c.execute("UPDATE runs SET conventions_digest = 'an-old-digest'")
        ((spans,),) = c.query("SELECT span_count FROM runs")
        (root,) = c.query("SELECT span_id FROM spans WHERE name = 'badge.run'")[0]
        late = request(
            [span(bytes.fromhex(trace_id), new_span_id(), "late", parent=bytes.fromhex(root))],
            service="acme-agent",
        )
        assert c.post(late.SerializeToString()).status_code == 200
        wait_for(lambda: c.query("SELECT span_count FROM runs") == [(spans + 1,)])
        assert c.query("SELECT conventions_digest FROM runs") == [("an-old-digest",)]


# PostgreSQL only: on SQLite the one writer's lease is every process's.
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_reclassify_refuses_while_a_server_holds_the_sweeper_lease(
    database_url: str,
) -> None:
    server = start_server(database_url)
    try:
        refused = cli("reclassify", "--database-url", database_url, check=False)
    finally:
        assert server.stop() == 0
    assert refused.returncode == 1 and "sweeper lease" in refused.stderr
    assert cli("reclassify", "--database-url", database_url).returncode == 0


def test_a_span_stored_during_a_batch_makes_it_read_the_trace_again(
    tmp_path: Path, acme_file: Path
) -> None:
    """The optimistic check: a trace that gained a span between the batch's
    read and its write is read again, and its run counts that span."""
    with running_collector(tmp_path) as c:
        trace_id, body = acme_trace("acme-raced")
        assert c.post(body).status_code == 200
        wait_for(lambda: c.query("SELECT count(*) FROM runs") == [(1,)])
        c.settle()
        ((spans,),) = c.query("SELECT span_count FROM runs")
        (root,) = c.query("SELECT span_id FROM spans WHERE name = 'badge.run'")[0]
        late = request(
            [span(bytes.fromhex(trace_id), new_span_id(), "late", parent=bytes.fromhex(root))],
            service="acme-agent",
        ).SerializeToString()
        writer, writes = c.service.writer, []

        class SpanArrivesFirst:
            """The batch writer, with an export committed before the first job."""

            def submit_job(self, write: Any, traces: Any = ()) -> Any:
                if not writes:
                    assert c.post(late).status_code == 200  # answered once committed
                writes.append(traces)
                return writer.submit_job(write, traces)

        digest = acme_digest(acme_file)
        work = Reclassifier(
            c.service.db,
            load_active([str(acme_file)]),
            run_timers(c.service.settings),
            time.time,
            SpanArrivesFirst(),
            paused=c.service.recomputer.paused,  # as the service builds it
        )
        progress = work.run()
        assert (progress.reclassified, progress.given_up, len(writes)) == (1, 0, 2)
        c.settle()
        assert c.query("SELECT span_count, steps, conventions_digest FROM runs") == [
            (spans + 1, 2, digest)
        ]
