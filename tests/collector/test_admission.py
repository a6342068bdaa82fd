"""The in-flight budget: bytes as they arrive, and one owner's share of them
(collector.ingest.admission; issue 29)."""

from __future__ import annotations

import pytest

from collector.errors import Overloaded
from collector.ingest.admission import InflightBudget
from collector.metrics import Metrics


def test_one_owner_holds_at_most_its_share_and_the_others_still_get_room() -> None:
    budget = InflightBudget(100, Metrics(), max_bytes_per_owner=50)
    flooder = budget.reserve("b")
    flooder.grow_to(40)
    with pytest.raises(Overloaded, match="this key's exports in flight"):
        budget.reserve("b").grow_to(20)
    other = budget.reserve("a")
    other.grow_to(50)
    assert (budget.used(), budget.used("a"), budget.used("b")) == (90, 50, 40)
    with pytest.raises(Overloaded, match=r"bytes of exports in flight \(limit 100\)"):
        budget.reserve("c").grow_to(20)
    flooder.release()
    other.release()
    assert (budget.used(), budget.used("b")) == (0, 0)


def test_an_owner_with_nothing_in_flight_gets_one_request_past_its_share() -> None:
    budget = InflightBudget(100, Metrics(), max_bytes_per_owner=10)
    with budget.reserve("a") as alone:
        alone.grow_to(80)  # a request larger than the share, alone: admitted
        assert budget.used("a") == 80


def test_a_reservation_grows_with_the_bytes_and_gives_them_all_back() -> None:
    metrics = Metrics()
    budget = InflightBudget(1000, metrics)
    with budget.reserve("a") as upload:
        for arrived in (1, 64, 300):
            upload.grow_to(arrived)
        assert budget.used() == 300
        assert b"badge_inflight_bytes 300.0" in metrics.render()
    assert budget.used() == 0
