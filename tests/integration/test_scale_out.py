"""Two collector processes on one PostgreSQL database give the runs one gives.

Every trace is sent whole to a single reference process (its own database).
The same spans, shuffled, split into pieces with duplicates, go to two
processes sharing one database, concurrently, over both doors, with the
pieces of each trace released at the same moment on both sides, so that the
processes race on the same traces (storage.dialect.register_traces).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import create_engine, text

from bench.support.otlp import agent_run, request
from bench.support.postgres import PostgresCluster
from bench.support.servers import OtlpClient, ServerProcess, cli, start_server
from tests.integration.harness import RUN_OUTCOME_COLUMNS

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog

COMPARED = ("id", "agent_id", "trace_id", *RUN_OUTCOME_COLUMNS)  # one owner: ids agree too
TRACES = 60


def snapshot(url: str) -> tuple[list[tuple[Any, ...]], int]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            runs = [tuple(r) for r in conn.execute(text(f"SELECT {', '.join(COMPARED)} FROM runs"))]
            spans = int(conn.execute(text("SELECT count(*) FROM spans")).scalar_one())
        return sorted(runs, key=repr), spans
    finally:
        engine.dispose()


class Sender:
    """Exports to one server process, alternating the two doors."""

    def __init__(self, server: ServerProcess, key: str) -> None:
        self._client = OtlpClient(server, key)
        self._turn = 0

    def send(self, message: ExportTraceServiceRequest) -> None:
        self._turn += 1
        self._client.export(message.SerializeToString(), "http" if self._turn % 2 else "grpc")

    def close(self) -> None:
        self._client.close()


def servers(url: str, count: int) -> tuple[list[ServerProcess], str]:
    key = cli("keys", "create", "--owner", "me", "--database-url", url).stdout.strip()
    return [start_server(url) for _ in range(count)], key


@pytest.fixture
def databases(postgres: PostgresCluster) -> Iterator[tuple[str, str]]:
    yield postgres.create_database(), postgres.create_database()


def test_two_processes_on_one_database_store_the_runs_one_process_stores(
    databases: tuple[str, str],
) -> None:
    reference_url, shared_url = databases
    rnd = random.Random(20261130)
    messages = [
        agent_run(
            f"task-{i % 7}",
            service=f"agent-{i % 3}",
            tools=rnd.randint(1, 8),
            success=rnd.random() < 0.7,
            cost=rnd.choice([None, 0.01 * i]),
            error=rnd.random() < 0.1,
        )
        for i in range(TRACES)
    ]
    # Per trace: its spans plus some again (exporter retries), shuffled, cut in
    # 2-4 pieces; piece k goes to process k % 2, so both get part of every trace.
    shares: list[list[list[ExportTraceServiceRequest]]] = [[], []]
    for message in messages:
        for share in shares:
            share.append([])
        service = message.resource_spans[0].resource.attributes[0].value.string_value
        spans = list(message.resource_spans[0].scope_spans[0].spans)
        pieces = spans + rnd.sample(spans, k=rnd.randint(0, len(spans)))
        rnd.shuffle(pieces)
        cuts = sorted(rnd.sample(range(1, len(pieces)), k=rnd.randint(1, 3)))
        bounds = zip([0, *cuts], [*cuts, len(pieces)], strict=True)
        for k, (start, end) in enumerate(bounds):
            shares[k % 2][-1].append(request(pieces[start:end], service))

    reference, reference_key = servers(reference_url, 1)
    pair, key = servers(shared_url, 2)
    try:
        sender = Sender(reference[0], reference_key)
        for message in messages:
            sender.send(message)
        sender.close()

        barrier = threading.Barrier(2)
        failures: list[BaseException] = []

        def drive(server: ServerProcess, share: list[list[ExportTraceServiceRequest]]) -> None:
            client = Sender(server, key)
            try:
                for pieces in share:  # trace by trace, both processes at once
                    barrier.wait(30)
                    for message in pieces:
                        client.send(message)
            except BaseException as exc:  # reported below, in the test's thread
                failures.append(exc)
            finally:
                client.close()

        threads = [
            threading.Thread(target=drive, args=(server, share))
            for server, share in zip(pair, shares, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures, failures

        expected = snapshot(reference_url)
        assert len(expected[0]) == TRACES and expected[1] > TRACES
        deadline = time.monotonic() + 30
        while (got := snapshot(shared_url)) != expected and time.monotonic() < deadline:
            time.sleep(0.2)
        assert got == expected
        time.sleep(1.5)  # a late recomputation must not undo it
        assert snapshot(shared_url) == expected
    finally:
        for server in [*reference, *pair]:
            server.stop()


def test_a_grade_and_its_new_run_committed_at_once_by_two_processes_meet(
    databases: tuple[str, str],
) -> None:
    """Process 1 stores each run's first spans while process 2 stores its
    grade, released together: every run ends graded (storage.dialect.hold_runs)."""
    _, shared_url = databases
    (first, second), key = servers(shared_url, 2)
    grader = cli(
        "keys", "create", "--owner", "me", "--role", "grader", "--database-url", shared_url
    ).stdout.strip()
    messages = [agent_run(f"task-{i}", service="raced", success=True) for i in range(40)]
    trace_ids = [m.resource_spans[0].scope_spans[0].spans[0].trace_id.hex() for m in messages]
    barrier = threading.Barrier(2)
    failures: list[BaseException] = []

    def ingest() -> None:
        client = OtlpClient(first, key)
        try:
            for message in messages:
                barrier.wait(30)
                client.export(message.SerializeToString(), "http")
        except BaseException as exc:
            failures.append(exc)
        finally:
            client.close()

    def grade() -> None:
        try:
            with httpx.Client(timeout=30) as http:
                for trace_id in trace_ids:
                    barrier.wait(30)
                    reply = http.post(
                        f"http://127.0.0.1:{second.http_port}/api/v1/grades",
                        json={"agent": "raced", "run_key": trace_id, "success": False},
                        headers={"authorization": f"Bearer {grader}"},
                    )
                    assert reply.status_code == 202, reply.text
        except BaseException as exc:
            failures.append(exc)

    try:
        threads = [threading.Thread(target=ingest), threading.Thread(target=grade)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures, failures
        engine = create_engine(shared_url)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with engine.connect() as conn:
                    outcomes = conn.execute(
                        text("SELECT success, success_source, count(*) FROM runs GROUP BY 1, 2")
                    ).all()
                if [tuple(r) for r in outcomes] == [(False, "graded", 40)]:
                    break
                time.sleep(0.2)
            assert [tuple(r) for r in outcomes] == [(False, "graded", 40)]
            with engine.connect() as conn:  # no placeholder ever committed
                assert (
                    conn.execute(text("SELECT count(*) FROM runs WHERE status = 'held'")).scalar()
                    == 0
                )
        finally:
            engine.dispose()
    finally:
        first.stop()
        second.stop()
