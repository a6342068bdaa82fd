"""Personal radar weights (docs/loop.md): saved per owner, applied to that
owner's /fitness when it passes no weights, never to anyone else's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.harness import Collector, running_collector
from tests.integration.test_api import completed_runs, run_trace

ME = "/api/v1/me/radar-weights"


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with running_collector(tmp_path, database_url=database_url) as c:
        for i in range(6):  # slow runs: latency 0, every other axis 100
            c.post(run_trace(f"t{i % 3}", service="weighted", latency_ns=10_500_000_000))
        completed_runs(c, 6)
        yield c


def as_owner(c: Collector, key: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"} if key else {}


def fitness(c: Collector, key: str | None, **params: str) -> dict[str, object]:
    [(ident,)] = c.query("SELECT id FROM agents WHERE name = 'weighted'")
    reply = c.http.get(
        f"{c.http_url}/api/v1/agents/{ident}/fitness", params=params, headers=as_owner(c, key)
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, object] = reply.json()
    return body


def test_saved_weights_apply_to_their_owner_alone_and_survive_a_restart(
    tmp_path: Path, database_url: str
) -> None:
    with running_collector(tmp_path, database_url=database_url) as c:
        for i in range(6):
            c.post(run_trace(f"t{i % 3}", service="weighted", latency_ns=10_500_000_000))
        completed_runs(c, 6)
        other = c.service.keys.create("owner-b")
        default = fitness(c, c.key)
        assert default["composite_score"] == 80.0  # (0 + 4 x 100) / 5
        saved = c.http.put(
            f"{c.http_url}{ME}", json={"weights": {"latency": 1}}, headers=as_owner(c, c.key)
        )
        assert saved.status_code == 200 and saved.json()["saved"] is True
        assert saved.json()["weights"]["latency"] == 1.0 and saved.json()["weights"]["cost"] == 0.0
        mine = fitness(c, c.key)
        assert mine["composite_score"] == 0.0  # latency alone
        assert mine["canonical_composite_score"] == default["canonical_composite_score"]
        assert fitness(c, other)["composite_score"] == 80.0  # another owner: untouched
        assert fitness(c, None)["composite_score"] == 80.0  # no key: the defaults
        explicit = fitness(c, c.key, weights="cost:1")
        assert explicit["composite_score"] == 100.0  # an explicit parameter wins
    with running_collector(tmp_path, database_url=database_url) as again:  # stored durably
        assert fitness(again, again.service.keys.create("owner-a-2"))["composite_score"] == 80.0
        reply = again.http.get(f"{again.http_url}{ME}", headers=as_owner(again, c.key))
        assert reply.json() == {"weights": saved.json()["weights"], "saved": True}
        assert (
            again.http.delete(f"{again.http_url}{ME}", headers=as_owner(again, c.key)).status_code
            == 204
        )
        back = again.http.get(f"{again.http_url}{ME}", headers=as_owner(again, c.key)).json()
        assert back["saved"] is False and set(back["weights"].values()) == {0.2}


def test_weights_need_a_key_and_valid_numbers(collector: Collector) -> None:
    url = f"{collector.http_url}{ME}"
    assert collector.http.get(url).status_code == 401
    assert collector.http.put(url, json={"weights": {"latency": 1}}).status_code == 401
    assert collector.http.delete(url).status_code == 401
    key = as_owner(collector, collector.key)
    for bad in ('{"speed": 1}', '{"latency": -1}', '{"latency": "x"}', '{"latency": 1e400}'):
        body = f'{{"weights": {bad}}}'.encode()  # 1e400: infinite once parsed
        headers = {**key, "content-type": "application/json"}
        reply = collector.http.put(url, content=body, headers=headers)
        assert reply.status_code == 422, bad
        assert isinstance(reply.json()["detail"], str)
    assert collector.http.put(url, json={"other": 1}, headers=key).status_code == 422
    assert collector.http.get(url, headers=key).json()["saved"] is False  # nothing stored
