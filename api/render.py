"""Rendering helpers: times as RFC 3339, cursors as opaque strings."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime

from fastapi import HTTPException

from api.ports import RunRow
from api.schemas import RunSummary

STATUS_NAMES = {0: "unset", 1: "ok", 2: "error"}


def rfc3339(epoch_s: float | None) -> str | None:
    if epoch_s is None:
        return None
    return datetime.fromtimestamp(epoch_s, UTC).isoformat().replace("+00:00", "Z")


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode()


def decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise HTTPException(422, "malformed cursor") from None


# What the cursors this API hands out decode to: a page offset, and a run
# position (started_ns:run_id). Anything else is a 422, never a 500 (a cursor
# of "²" passes str.isdigit(), and int() of 5,000 digits raises).
_OFFSET = re.compile(r"[0-9]{1,9}")
_POSITION = re.compile(r"(-?[0-9]{1,19}):([0-9a-f-]{1,64})")
_INT64 = 1 << 63


def page_offset(cursor: str) -> int:
    """The offset a leaderboard cursor holds."""
    offset = decode_cursor(cursor)
    if not _OFFSET.fullmatch(offset):
        raise HTTPException(422, "malformed cursor")
    return int(offset)


def run_position(cursor: str) -> tuple[int, str]:
    """The (started_ns, run id) a run-list cursor holds."""
    match = _POSITION.fullmatch(decode_cursor(cursor))
    if match is None or not -_INT64 <= int(match[1]) < _INT64:
        raise HTTPException(422, "malformed cursor")
    return int(match[1]), match[2]


def run_summary(run: RunRow) -> RunSummary:
    return RunSummary(
        id=run.id,
        agent_id=run.agent_id,
        trace_id=run.trace_id,
        task_id=run.task_id,
        status=run.status,
        success=run.success,
        success_source=run.success_source,
        started_at=rfc3339(run.started_at) or "",
        ended_at=rfc3339(run.ended_at) or "",
        latency_ms=run.latency_ms,
        steps=run.steps,
        llm_calls=run.llm_calls,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        cost_usd=run.cost_usd,
        cost_source=run.cost_source,
        error_class=run.error_class,
        span_count=run.span_count,
    )
