"""One log line a minute for an event a client can repeat at will.

A refused connection or a failed accept used to log a line (a traceback,
for a failed accept) each time: 153 MB of log in 30 s under a connection
flood (issue 29). Such events are counted in /metrics instead, and this
says once a minute how many there were.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

PERIOD_S = 60.0


class OncePerMinute:
    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        period_s: float = PERIOD_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._what = what
        self._period = period_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last = -period_s  # the first event logs at once
        self._unlogged = 0

    def note(self, detail: str = "") -> None:
        """Count one event; log the count if the last line is a period old."""
        now = self._clock()
        with self._lock:
            self._unlogged += 1
            if now - self._last < self._period:
                return
            count, self._unlogged, self._last = self._unlogged, 0, now
        suffix = f" ({detail})" if detail else ""
        self._logger.warning(
            "%s: %d since the last such line%s; counted in /metrics, logged at most once a minute",
            self._what,
            count,
            suffix,
        )
