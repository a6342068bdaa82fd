"""What one request can make the collector store (docs/otlp.md "Limits").

A resource used to be copied whole into every span row, and keys were never
cut: 200 spans with one 1 MB resource attribute stored 210 MB.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.support.otlp import new_span_id, new_trace_id, request, span
from tests.integration.harness import Collector, running_collector

MB = 1024 * 1024


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with running_collector(tmp_path, database_url=database_url) as c:
        yield c


def stored_bytes(c: Collector) -> int:
    """Bytes of every variable-length column the collector stored."""
    spans = c.query(
        "SELECT coalesce(sum(length(encoded) + length(facts) + length(resource_digest) "
        "+ length(name) + length(scope_name) + length(status_message)), 0) FROM spans"
    )[0][0]
    resources = c.query("SELECT coalesce(sum(length(encoded)), 0) FROM resources")[0][0]
    return int(spans) + int(resources)


def test_a_big_resource_is_stored_once_not_once_per_span(collector: Collector) -> None:
    trace_id = new_trace_id()
    spans = [span(trace_id, new_span_id(), f"s{i}") for i in range(200)]
    body = request(spans, resource={"big": "r" * MB}).SerializeToString()
    assert collector.post(body).status_code == 200
    assert collector.span_count() == 200
    # The 1 MB value is cut to 16 KiB, and kept once: a small factor of the request.
    assert stored_bytes(collector) < len(body) // 10
    assert collector.query("SELECT count(*) FROM resources") == [(1,)]
    again = request([span(trace_id, new_span_id(), "more")], resource={"big": "r" * MB})
    assert collector.post(again.SerializeToString()).status_code == 200
    assert collector.query("SELECT count(*) FROM resources") == [(1,)]  # same resource


def checkpointed_size(path: Path) -> int:
    """The SQLite file's size once its WAL is written back into it."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path.stat().st_size


def test_sqlite_file_grows_by_a_small_factor_of_the_request(tmp_path: Path) -> None:
    with running_collector(tmp_path) as c:
        c.post(request([span(new_trace_id(), new_span_id(), "warm")]).SerializeToString())
        c.settle()
        before = checkpointed_size(c.db_path)
        trace_id = new_trace_id()
        body = request(
            [span(trace_id, new_span_id(), f"s{i}") for i in range(200)],
            resource={"big": "r" * MB},
        ).SerializeToString()
        assert c.post(body).status_code == 200
        c.settle()
        assert checkpointed_size(c.db_path) - before < 2 * len(body) // 10


def test_keys_and_values_are_cut_everywhere_and_the_cut_is_counted(collector: Collector) -> None:
    long_key = "k" * 10_000
    trace_id = new_trace_id()
    root = span(
        trace_id,
        new_span_id(),
        "badge.run",
        attributes={long_key: "v", "blob": b"\x01" * 100_000, "badge.task.id": "t"},
        events=[("e", {long_key: "x" * 100_000})],
    )
    link = root.links.add(trace_id=trace_id, span_id=new_span_id())
    link.attributes.add(key=long_key).value.string_value = "y" * 100_000
    message = request([root], resource={long_key: "r", **{f"r{i}": i for i in range(300)}})
    message.resource_spans[0].scope_spans[0].scope.name = "s" * 100_000
    assert collector.post(message.SerializeToString()).status_code == 200
    collector.settle()
    [(run_id,)] = collector.query("SELECT id FROM runs")
    reply = collector.http.get(
        f"{collector.http_url}/api/v1/runs/{run_id}/trace",
        headers={"authorization": f"Bearer {collector.key}"},
    )
    [node] = reply.json()["spans"]
    assert len(node["scope"].encode()) == 16 * 1024
    assert set(node["attributes"]) == {"k" * 256, "blob", "badge.task.id"}
    assert node["attributes"]["blob"]["bytesValue"]  # bytes stay bytes, cut at 16 KiB
    assert len(node["attributes"]["blob"]["bytesValue"]) == 4 * (16 * 1024 + 2) // 3
    [event] = node["events"]
    assert event["attributes"] == {"k" * 256: "x" * 16 * 1024}
    [link_view] = node["links"]
    assert link_view["attributes"] == {"k" * 256: "y" * 16 * 1024}
    resource = node["resource"]
    assert len(resource) == 256 and "k" * 256 in resource  # of 302 attributes
