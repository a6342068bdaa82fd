"""Sending the recorded corpus without coverage's line tracer (issue 43).

Coverage records which lines ran; on Python 3.11 its tracer is called for
every line, in every thread, so a corpus replay (about 3,000 exports through an
in-process collector) took twice the CPU under `make test` that it took
without it: 104 s against 49 s. The replays exercise the lines the rest of
the suite runs many times over, so what the report says about them does not
change; their own assertions, and the reads that check them, run traced.

Threads started inside the block (the in-process collector's) are never
traced; those already running keep their tracer but it records nothing while
coverage is stopped. Without coverage (a plain pytest run) this does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import coverage


@contextmanager
def untraced() -> Iterator[None]:
    running = coverage.Coverage.current()
    if running is None:
        yield
        return
    running.stop()
    try:
        yield
    finally:
        running.start()
