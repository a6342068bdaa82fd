"""Per-span facts computed once at ingest and stored as one small JSON column.

Everything run assembly needs from a span's attributes is reduced here, so
recomputing a run never re-reads the encoded span.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collector.assembly import conventions as c
from collector.assembly.classify import classify


@dataclass(frozen=True, slots=True)
class SpanFacts:
    """One stored span as run assembly sees it."""

    span_id: str
    parent_span_id: str
    agent_id: str
    name: str
    start_ns: int
    end_ns: int
    status_code: int
    flags: int
    received_at: float
    grader: bool
    role: str
    rule: str
    facts: Mapping[str, Any] = field(default_factory=dict)


def first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def as_int(value: Any) -> int | None:
    """Numbers may arrive as strings (RUNS.md "Normalise first")."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return None


def span_facts(
    name: str,
    attrs: Mapping[str, Any],
    resource: Mapping[str, Any],
    exception_type: str | None,
) -> tuple[str, str, dict[str, Any]]:
    """(role, rule, facts) of one span; facts hold only what is present."""
    verdict = classify(name, attrs)
    raw: dict[str, Any] = {
        "why": verdict.why_not or None,
        "tool": first(attrs, c.TOOL_NAME_KEYS),
        "call": first(attrs, c.TOOL_CALL_ID_KEYS),
        "in": as_int(first(attrs, c.INPUT_TOKEN_KEYS)),
        "out": as_int(first(attrs, c.OUTPUT_TOKEN_KEYS)),
        "ain": as_int(first(attrs, c.AGG_INPUT_KEYS)),
        "aout": as_int(first(attrs, c.AGG_OUTPUT_KEYS)),
        "cost": as_float(first(attrs, c.COST_KEYS)),
        "bcost": as_float(attrs.get("badge.cost.usd")),
        "run": _text(attrs.get("badge.run.id") or resource.get("badge.run.id")),
        "task": _text(first(attrs, c.TASK_KEYS)),
        "rtask": _text(first(resource, c.TASK_KEYS)),
        "succ": as_bool(attrs.get("badge.run.success")),
        "tstat": _text(attrs.get("gen_ai.task.status")),
        "eval": _text(attrs.get("gen_ai.evaluation.score.label")),
        "rstat": _text(attrs.get("badge.run.status")),
        "err": _text(attrs.get("error.type")),
        "exc": exception_type or None,
        "vfail": str(attrs.get("pydantic_ai.tool.failure_stage", "")).lower() == "validation"
        or None,
    }
    if raw["tool"] is not None:
        raw["tool"] = str(raw["tool"])
    if raw["call"] is not None:
        raw["call"] = str(raw["call"])
    facts = {key: value for key, value in raw.items() if value is not None}
    return verdict.role, verdict.rule, facts


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)
