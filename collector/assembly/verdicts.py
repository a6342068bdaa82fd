"""A span's verdict: how it was classified, whether it counted, and why."""

from __future__ import annotations

from typing import NamedTuple


class Verdict(NamedTuple):
    """How one span was classified and whether it counted, for the trace view.

    A NamedTuple for the same reason as SpanFacts: one per span per assembly.
    """

    role: str
    rule: str
    counted: bool
    reason: str
    clock: str = ""  # why this span's times were set aside (collector.assembly.clock)
