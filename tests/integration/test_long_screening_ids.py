"""Every stored screening opens by its id (issue 42 item 16): the id is what a
run's root named in `badge.screening.id`, of any length and with any
character, so every page and route that takes one takes it whole."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.integration.harness import Collector
from tests.integration.spec_runs import agent_id, get, run_spans, send, signed_collector


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with signed_collector(tmp_path, database_url) as running:
        yield running


def test_two_screenings_with_long_ids_compare_from_the_screening_pages_link(
    collector: Collector,
) -> None:
    older, newer = "nightly/" + "a" * 70, "nightly/" + "b" * 70
    for n, screening in enumerate((older, newer)):
        for task in ("t1", "t2"):
            spans = run_spans(
                task,
                {
                    "badge.screening.id": screening,
                    "badge.screening.round": 1,
                    "badge.suite.name": "suite",
                    "badge.suite.digest": "ab" * 32,
                },
            )
            for span in spans:  # the newer screening starts later
                span.start_ns += n * 10**10
                span.end_ns += n * 10**10
            send(collector, spans, service="long-ids")
    collector.settle()
    agent = agent_id(collector, "long-ids")
    page = get(collector, f"/agents/{agent}/screenings/{quote(newer, safe='')}")
    assert page.status_code == 200
    [link] = {
        html.unescape(h)
        for h in re.findall(r'href="([^"]+)"', page.text)
        if "/compare?" in h and "base_screening" in h
    }
    compared = get(collector, link)
    assert compared.status_code == 200, compared.text[:500]
    assert "a" * 70 in compared.text and "b" * 70 in compared.text
