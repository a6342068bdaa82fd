"""The in-flight budget: bytes as they arrive, shared max-min fairly among the
owners that compete for them (collector.ingest.admission; issues 29 and 39)."""

from __future__ import annotations

import pytest

from collector.errors import Overloaded
from collector.ingest.admission import WAITER_MEMORY_S, InflightBudget, Reservation
from collector.metrics import Metrics


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def budget_of(max_bytes: int, clock: Clock | None = None) -> InflightBudget:
    return InflightBudget(max_bytes, Metrics(), clock=clock or Clock())


def held(budget: InflightBudget, owner: str, *sizes: int) -> list[Reservation]:
    """Reservations of `owner` of these sizes, each admitted."""
    taken = []
    for size in sizes:
        reservation = budget.reserve(owner)
        reservation.grow_to(size)
        taken.append(reservation)
    return taken


def test_an_owner_alone_may_use_the_whole_budget() -> None:
    budget = budget_of(100)
    held(budget, "a", *[10] * 10)
    assert budget.used("a") == 100
    with pytest.raises(Overloaded, match=r"100 bytes of exports in flight \(limit 100\)"):
        budget.reserve("a").grow_to(1)


def test_an_owner_arriving_at_a_full_budget_gets_its_first_request_past_it() -> None:
    budget = budget_of(100)
    held(budget, "a", *[10] * 10)
    first = held(budget, "b", 10)[0]  # nothing of b's in flight: let through alone
    assert budget.used() == 110
    with pytest.raises(Overloaded, match="one request already past it"):
        budget.reserve("c").grow_to(5)  # only one request at a time past the budget
    first.release()
    held(budget, "c", 5)


def test_while_an_owner_below_its_share_waits_the_others_get_no_more_than_theirs() -> None:
    clock = Clock()
    budget = budget_of(100, clock)
    flood = held(budget, "a", *[10] * 10)
    held(budget, "b", 10)  # b's first request, past the budget
    with pytest.raises(Overloaded):
        budget.reserve("b").grow_to(10)  # b now waits for room
    assert budget.fair_share("b") == 50
    for reservation in flood[:5]:  # a's requests are answered one by one
        reservation.release()
    assert budget.used() == 60
    with pytest.raises(Overloaded, match=r"past its fair share \(50\) while another key waits"):
        budget.reserve("a").grow_to(10)  # a holds its 50: 10 more would pass it
    held(budget, "b", 10, 10, 10, 10)  # the room goes to b, up to its share
    assert (budget.used("a"), budget.used("b")) == (50, 50)


def test_every_competing_owner_gets_at_least_an_equal_share() -> None:
    clock = Clock()
    budget = budget_of(90, clock)
    flood = held(budget, "a", *[10] * 9)
    held(budget, "b", 10)  # b's first request, past the budget
    for late in ("b", "c"):  # b's second, and c's first while b's is past it
        with pytest.raises(Overloaded):
            budget.reserve(late).grow_to(10)
    assert budget.fair_share("a") == 30  # a, b and c compete
    for reservation in flood:
        reservation.release()
        for owner in "abc":  # all three keep asking as room appears
            try:
                budget.reserve(owner).grow_to(10)
            except Overloaded:
                pass
    assert budget.used("b") >= 30 and budget.used("c") >= 30
    assert budget.used("a") <= 30


def test_once_the_waiting_owner_stops_asking_the_rest_is_used_again() -> None:
    clock = Clock()
    budget = budget_of(100, clock)
    flood = held(budget, "a", *[10] * 10)
    first = held(budget, "b", 10)[0]  # past the budget
    with pytest.raises(Overloaded):
        budget.reserve("b").grow_to(10)  # b waits for room
    first.release()
    for reservation in flood[:5]:
        reservation.release()
    with pytest.raises(Overloaded, match="fair share"):
        budget.reserve("a").grow_to(10)
    clock.now += WAITER_MEMORY_S + 0.1  # b did not come back
    held(budget, "a", *[10] * 5)
    assert budget.used("a") == 100


def test_an_owners_only_request_is_admitted_past_its_share_and_the_budget() -> None:
    clock = Clock()
    budget = budget_of(100, clock)
    held(budget, "a", 30)
    with budget.reserve("b") as alone:
        alone.grow_to(60)  # its body
        alone.grow_to(400)  # decoded: larger than anything the budget holds
        assert budget.used() == 430
        with pytest.raises(Overloaded):
            budget.reserve("b").grow_to(1)  # but nothing else of b's meanwhile
        with pytest.raises(Overloaded):
            budget.reserve("a").grow_to(1)
    assert budget.used() == 30
    clock.now += WAITER_MEMORY_S + 0.1
    held(budget, "a", 70)


def test_one_owners_uploads_still_arriving_hold_at_most_half_the_budget() -> None:
    budget = budget_of(100)
    stalled = budget.reserve("a")
    stalled.grow_to(40, arriving=True)  # an upload that stops sending
    second = budget.reserve("a")
    second.grow_to(10, arriving=True)
    with pytest.raises(Overloaded, match="uploads are still arriving"):
        second.grow_to(11, arriving=True)
    second.arrived()  # once its body is in, it is work like any other
    second.grow_to(30)
    held(budget, "b", 30)  # another owner still has room
    assert (budget.used("a"), budget.used("b")) == (70, 30)


def test_a_refused_growth_takes_nothing_and_a_release_gives_everything_back() -> None:
    metrics = Metrics()
    budget = InflightBudget(100, metrics, clock=Clock())
    with budget.reserve("a") as upload:
        for arrived in (1, 64, 60):
            upload.grow_to(arrived, arriving=True)
        upload.arrived()
        assert budget.used() == 64
        assert b"badge_inflight_bytes 64.0" in metrics.render()
        other = budget.reserve("a")
        with pytest.raises(Overloaded):
            other.grow_to(37)
        assert (other.bytes, budget.used()) == (0, 64)
    assert budget.used() == 0
    assert b"badge_inflight_bytes 0.0" in metrics.render()
