"""Events a client can repeat at will are counted, and logged once a minute
(collector.receivers.quiet_log, http_guard; issue 29: 153 MB of log in 30 s)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from collector.metrics import Metrics
from collector.receivers.http_guard import ConnectionGuard
from collector.receivers.limits import DoorLimits
from collector.receivers.quiet_log import OncePerMinute


def test_once_per_minute_logs_the_first_event_then_a_count_a_minute_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [1000.0]
    quiet = OncePerMinute(logging.getLogger("test.quiet"), "refused", clock=lambda: now[0])
    for _ in range(1000):
        quiet.note()
    now[0] += 61
    quiet.note()
    lines = [r.getMessage() for r in caplog.records if r.name == "test.quiet"]
    assert len(lines) == 2
    assert lines[0].startswith("refused: 1 since") and lines[1].startswith("refused: 1000 since")


def test_failed_accepts_are_counted_not_logged_each(caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics()
    limits = DoorLimits(16 * 2**20, 10, 10.0, 30.0, 15.0, 32)
    guard = ConnectionGuard(limits, metrics)
    loop = asyncio.new_event_loop()
    try:
        for _ in range(2048):  # one wake-up of asyncio's accept loop out of descriptors
            guard.on_loop_error(
                loop,
                {
                    "message": "socket.accept() out of system resource",
                    "exception": OSError(24, "Too many open files"),
                },
            )
    finally:
        loop.close()
    assert b"badge_accept_errors_total 2048.0" in metrics.render()
    assert len([r for r in caplog.records if "failed to accept" in r.getMessage()]) == 1
