"""Threads that coverage's line tracer leaves alone (issue 43).

Coverage records which lines ran; on Python 3.11 its tracer is called for
every line, in every thread, so a corpus replay (about 3,000 exports through an
in-process collector) took twice the CPU under `make test` that it took
without it: 104 s against 49 s. The replays run lines that the rest of the
suite runs many times over, so what the report says about them does not
change.

Coverage puts its tracer on each new thread through `threading.settrace`.
Threads started inside `untraced()` (an in-process collector's, a replay's
senders) get none, for their whole life; the thread that opened the block keeps
its tracer, so the reads and assertions it makes are traced. Stopping coverage
itself would not do: pytest-cov's xdist workers start theirs twice, and one
`stop()` resumes the copy below it. Without coverage this changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast


@contextmanager
def untraced() -> Iterator[None]:
    installed = threading.gettrace()
    threading.settrace(cast(Any, None))
    try:
        yield
    finally:
        threading.settrace(cast(Any, installed))
