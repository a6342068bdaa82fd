"""Replaying the corpus through both doors stores exactly its spans, once."""

from __future__ import annotations

import pytest

from tests.corpus import SCENARIOS, Payload, payloads, span_identities
from tests.integration.harness import Collector
from tests.integration.replay import replay_scenarios, send_as_recorded, send_through


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_replay_as_recorded_stores_exactly_the_payload_spans(
    collector: Collector, scenario: str
) -> None:
    for payload in payloads(scenario):
        send_as_recorded(collector, payload)
    stored = set(collector.query("SELECT trace_id, span_id FROM spans"))
    assert stored == span_identities(scenario)


@pytest.mark.parametrize("door", ["grpc", "http"])
def test_replay_through_each_door_twice_stores_once(collector: Collector, door: str) -> None:
    def twice(payload: Payload) -> None:
        send_through(collector, payload, door)
        send_through(collector, payload, door)  # an exporter retry

    replay_scenarios(SCENARIOS, twice)
    expected = set().union(*(span_identities(s) for s in SCENARIOS))
    assert collector.span_count() == len(expected)
    assert set(collector.query("SELECT trace_id, span_id FROM spans")) == expected
