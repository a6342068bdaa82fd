"""Deadlines on one thread (collector.receivers.deadlines): what fires, what
does not, and the heap's tail of disarmed entries."""

from __future__ import annotations

import threading
import time

import pytest

from collector.receivers.deadlines import Deadlines

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog


def test_an_armed_deadline_fires_and_a_disarmed_one_does_not() -> None:
    deadlines = Deadlines("test-deadlines")
    fired: list[str] = []
    done = threading.Event()
    try:
        # Armed and disarmed while the deadline thread cannot look at the heap
        # (a test thread descheduled past 50 ms would find `kept` fired); `kept`
        # comes up first, so by the time `late` fires it has been passed over.
        with deadlines._changed:
            late = deadlines.arm(0.1, lambda: (fired.append("late"), done.set()))
            kept = deadlines.arm(0.05, lambda: fired.append("kept"))
            assert deadlines.disarm(kept) is True
        assert done.wait(10)
        assert fired == ["late"]
        assert deadlines.disarm(late) is False  # too late: it has fired
    finally:
        deadlines.close()


def test_deadlines_fire_in_order_whatever_order_they_were_armed_in() -> None:
    deadlines = Deadlines("test-deadlines")
    fired: list[int] = []
    done = threading.Event()
    try:
        with deadlines._changed:  # all armed before any can come up, however slow this thread
            deadlines.arm(0.3, lambda: (fired.append(3), done.set()))
            deadlines.arm(0.1, lambda: fired.append(1))
            deadlines.arm(0.2, lambda: fired.append(2))
        assert done.wait(10)
        assert fired == [1, 2, 3]
    finally:
        deadlines.close()


def test_many_disarmed_deadlines_do_not_stay_in_the_heap() -> None:
    deadlines = Deadlines("test-deadlines")
    try:
        for _ in range(5000):
            deadlines.disarm(deadlines.arm(3600, lambda: None))
        assert len(deadlines._heap) < 2100
    finally:
        started = time.monotonic()
        deadlines.close()
        assert time.monotonic() - started < 5
