"""CERTS.md section 3 checked by a verifier written from the spec alone
(tests/integration/spec_checks.py), on both databases: issuing on first
request, answering from storage, superseding, soft-deleted agents, 409 and
404, and the log's hash chain and signed head."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.integration.harness import Collector
from tests.integration.spec_checks import (
    HEAD,
    UTC_TIME,
    chain_of,
    check_statement,
    next_link,
    open_envelope,
)
from tests.integration.spec_runs import (
    API,
    SentSpan,
    agent_id,
    envelope,
    get,
    keys_of,
    run_id,
    run_spans,
    send,
    signed_collector,
)


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with signed_collector(tmp_path, database_url) as running:
        yield running


# -- section 3: issuing and superseding ------------------------------------------


def test_an_unchanged_subject_is_answered_from_storage_and_a_changed_one_superseded(
    collector: Collector,
) -> None:
    spans = run_spans("late")
    send(collector, spans)
    collector.settle()
    ident = run_id(collector, spans)
    agent = agent_id(collector, "spec-agent")
    first, score = envelope(collector, f"/runs/{ident}"), envelope(collector, f"/agents/{agent}")
    assert envelope(collector, f"/runs/{ident}") == first
    assert envelope(collector, f"/agents/{agent}") == score
    late = SentSpan(
        spans[0].trace_id,
        os.urandom(8),
        "execute_tool late",
        parent=spans[1].span_id,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "late"},
    )
    send(collector, [late])
    collector.settle()
    keys = keys_of(collector)
    old = open_envelope(first, keys)
    new = open_envelope(envelope(collector, f"/runs/{ident}"), keys)
    newer = check_statement(new, "run", f"run:{ident}")
    assert newer["supersedes"] == old.statement_digest
    assert newer["spans"]["count"] == 5
    assert newer["run"]["steps"] == old.document["predicate"]["run"]["steps"] + 1
    send(collector, run_spans("another"))  # a new run of the agent: a new score
    collector.settle()
    rescored = open_envelope(envelope(collector, f"/agents/{agent}"), keys)
    assert (
        rescored.document["predicate"]["supersedes"] == open_envelope(score, keys).statement_digest
    )


def test_a_soft_deleted_agent_keeps_its_certificates(collector: Collector) -> None:
    spans = run_spans("gone")
    send(collector, spans)
    collector.settle()
    ident, agent = run_id(collector, spans), agent_id(collector, "spec-agent")
    before = (envelope(collector, f"/runs/{ident}"), envelope(collector, f"/agents/{agent}"))
    deleted = collector.http.delete(
        f"{collector.http_url}{API}/agents/{agent}",
        headers={"authorization": f"Bearer {collector.key}"},
    )
    assert deleted.status_code == 204
    keys = keys_of(collector)
    after = (envelope(collector, f"/runs/{ident}"), envelope(collector, f"/agents/{agent}"))
    for then, now in zip(before, after, strict=True):
        open_envelope(now, keys)
        assert open_envelope(then, keys).statement_digest in {
            open_envelope(now, keys).statement_digest,
            open_envelope(now, keys).document["predicate"]["supersedes"],
        }


def test_a_run_not_terminal_is_409_and_unknown_subjects_404(collector: Collector) -> None:
    trace, root = os.urandom(16), os.urandom(8)
    child = SentSpan(
        trace,
        os.urandom(8),
        "chat m",
        parent=root,
        attributes={"gen_ai.operation.name": "chat", "badge.task.id": "open"},
    )
    send(collector, [child])
    collector.settle()
    [(ident, status)] = collector.query("SELECT id, status FROM runs")
    assert status == "running"
    assert get(collector, f"{API}/runs/{ident}/certificate").status_code == 409
    assert (
        get(collector, f"{API}/runs/00000000-0000-0000-0000-000000000000/certificate").status_code
        == 404
    )
    assert get(collector, f"{API}/screenings/none-such/certificate").status_code == 404
    assert (
        get(collector, f"{API}/agents/00000000-0000-0000-0000-000000000000/certificate").status_code
        == 404
    )


def test_a_screening_whose_id_holds_a_slash_or_is_long_has_a_certificate_by_path(
    collector: Collector,
) -> None:
    """Section 3: every stored screening's certificate answers; its id is the
    root's badge.screening.id, whatever it holds; the page's link opens it."""
    long_id = "nightly-" + "x" * 80
    for screening in ("team/nightly 1", long_id):
        root = {
            "badge.screening.id": screening,
            "badge.screening.round": 1,
            "badge.suite.name": "suite",
            "badge.suite.digest": "ef" * 32,
        }
        send(collector, run_spans("a", root))
    collector.settle()
    agent = agent_id(collector, "spec-agent")
    for screening in ("team/nightly 1", long_id):
        encoded = quote(screening, safe="")
        reply = get(collector, f"{API}/screenings/{encoded}/certificate")
        assert reply.status_code == 200, reply.text
        opened = open_envelope(reply.content, keys_of(collector))
        check_statement(opened, "screening", f"screening:{screening}")
        page = get(collector, f"/agents/{agent}/screenings/{encoded}").text
        [link] = re.findall(r'id="screening-certificate" href="([^"]+)"', page)
        followed = get(collector, html.unescape(link))
        assert followed.status_code == 200 and followed.content == reply.content


# -- the log and its head ---------------------------------------------------------


def log_entries(c: Collector, **params: Any) -> tuple[list[dict[str, Any]], int]:
    reply = get(c, f"{API}/certificates/log", **params)  # keyless
    assert reply.status_code == 200, reply.text
    page = reply.json()
    return page["items"], page["size"]


def signed_head(c: Collector) -> dict[str, Any]:
    reply = get(c, f"{API}/certificates/head")  # keyless
    assert reply.status_code == 200, reply.text
    opened = open_envelope(reply.content, keys_of(c))
    assert opened.payload_type == HEAD
    head: dict[str, Any] = opened.document
    assert set(head) == {"_type", "size", "chain", "issued_at"}
    assert head["_type"] == "urn:badge-collector:log-head:v1"
    assert UTC_TIME.match(head["issued_at"])
    return head


def test_every_certificate_issued_is_logged_in_a_hash_chain_under_a_signed_head(
    collector: Collector,
) -> None:
    empty = signed_head(collector)
    assert (empty["size"], empty["chain"]) == (0, "0" * 64)  # chain_0
    issued: list[tuple[str, str, bytes]] = []
    for task in ("a", "b"):
        spans = run_spans(task)
        send(collector, spans)
        collector.settle()
        ident = run_id(collector, spans)
        issued.append(("run", f"run:{ident}", envelope(collector, f"/runs/{ident}")))
    old_head = signed_head(collector)
    agent = agent_id(collector, "spec-agent")
    issued.append(("score", f"agent:{agent}", envelope(collector, f"/agents/{agent}")))
    keys = keys_of(collector)
    items, size = log_entries(collector)
    assert size == 3 and [e["n"] for e in items] == [1, 2, 3]
    chain = "0" * 64
    for entry, (kind, subject, data) in zip(items, issued, strict=True):
        opened = open_envelope(data, keys)
        chain = next_link(chain, opened.statement_digest)
        assert entry["statement_digest"] == opened.statement_digest
        assert (entry["kind"], entry["subject"], entry["chain"]) == (kind, subject, chain)
        assert entry["issued_at"] == opened.document["predicate"]["issued_at"]
    head = signed_head(collector)
    assert (head["size"], head["chain"]) == (3, chain)
    # a verifier that kept the older head checks that the log only grew
    assert chain_of([e["statement_digest"] for e in items[: old_head["size"]]]) == old_head["chain"]


def test_the_log_pages_by_after_and_limit_within_1_to_1000_default_100(
    collector: Collector,
) -> None:
    for n in range(101):
        send(collector, run_spans(f"page-{n}"))
    collector.settle()
    for (ident,) in collector.query("SELECT id FROM runs"):
        envelope(collector, f"/runs/{ident}")
    items, size = log_entries(collector)
    assert size == 101 and [e["n"] for e in items] == list(range(1, 101))  # default 100
    items, _ = log_entries(collector, after=99, limit=5)
    assert [e["n"] for e in items] == [100, 101]
    items, _ = log_entries(collector, after=0, limit=1000)
    assert len(items) == 101
    assert chain_of([e["statement_digest"] for e in items]) == items[-1]["chain"]
    for limit in (0, 1001):
        assert get(collector, f"{API}/certificates/log", limit=limit).status_code == 422
