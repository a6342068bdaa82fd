"""Rendering helpers: times as RFC 3339, cursors as opaque strings."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime
from typing import Any

from api.ports import RunInfo, TraceSpan
from api.problems import Invalid
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
        raise Invalid("malformed cursor") from None


# What the cursors this API hands out decode to: a page offset, and a run
# position (started_ns:run_id). Anything else is a 422, never a 500 (a cursor
# of "²" passes str.isdigit(), and int() of 5,000 digits raises).
_OFFSET = re.compile(r"[0-9]{1,9}")
_POSITION = re.compile(r"(-?[0-9]{1,19}):([0-9a-f-]{1,64})")
_INT64 = 1 << 63


def page_offset(cursor: str) -> int:
    """The offset a cursor of a list paged by position holds (leaderboard, tool calls, versions)."""
    offset = decode_cursor(cursor)
    if not _OFFSET.fullmatch(offset):
        raise Invalid("malformed cursor")
    return int(offset)


def run_position(cursor: str) -> tuple[int, str]:
    """The (started_ns, run id) a run-list cursor holds."""
    match = _POSITION.fullmatch(decode_cursor(cursor))
    if match is None or not -_INT64 <= int(match[1]) < _INT64:
        raise Invalid("malformed cursor")
    return int(match[1]), match[2]


# Summary fields the run gives in another shape (times as RFC 3339) or not
# at all; the rest are copied by name.
_SUMMARY_OWN = frozenset({"started_at", "ended_at", "terminal_at", "owner_view"})
_SUMMARY_COPIED = tuple(name for name in RunSummary.model_fields if name not in _SUMMARY_OWN)


def run_summary(run: RunInfo, owner_view: bool) -> RunSummary:
    """A run as api.visibility.shown_to left it for the caller."""
    return RunSummary(
        **{name: getattr(run, name) for name in _SUMMARY_COPIED},
        started_at=rfc3339(run.started_at) or "",
        ended_at=rfc3339(run.ended_at) or "",
        terminal_at=rfc3339(run.terminal_at),
        owner_view=owner_view,
    )


def trace_tree(spans: list[TraceSpan]) -> list[dict[str, Any]]:
    """The spans as a forest for JSON: each node with its children; a span whose
    parent is not among them is a root."""
    nodes: dict[str, dict[str, Any]] = {}
    for span in spans:
        verdict = span.verdict
        nodes[span.span_id] = {
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id,
            "name": span.name,
            "kind": span.kind,
            "start": span.start_ns,
            "end": span.end_ns,
            "status": {
                "code": STATUS_NAMES.get(span.status_code, "unset"),
                "message": span.status_message,
            },
            "resource": span.resource,
            "scope": span.scope,
            **span.details,
            "classification": {
                "role": verdict.role,
                "rule": verdict.rule,
                "convention": verdict.convention,
                "rule_role": verdict.rule_role,
                "rule_index": verdict.rule_index,
                "unrecognised": verdict.unrecognised,
                "counted": verdict.counted,
                "reason": verdict.reason,
                "root": verdict.root,
                "clock": verdict.clock,
                "ignored": dict(verdict.ignored) if verdict.ignored else None,
            },
            "children": [],
        }
    cut = _cycle_breaks(nodes)
    roots: list[dict[str, Any]] = []
    for span_id, node in nodes.items():
        parent = None if span_id in cut else nodes.get(node["parent_span_id"] or "")
        (parent["children"] if parent else roots).append(node)
    return roots


def _cycle_breaks(nodes: dict[str, dict[str, Any]]) -> set[str]:
    """The earliest span of each parent cycle (a span its own parent, A under B
    under A), shown as a root: otherwise the cycle's spans hang from nothing and
    vanish from the tree, or a span holds itself and cannot be written as JSON."""
    done: set[str] = set()
    breaks: set[str] = set()
    for start in nodes:
        path: list[str] = []
        on_path: dict[str, int] = {}
        current = start
        while current in nodes and current not in done:
            if current in on_path:
                cycle = path[on_path[current] :]
                breaks.add(min(cycle, key=lambda ident: (nodes[ident]["start"], ident)))
                break
            on_path[current] = len(path)
            path.append(current)
            current = nodes[current]["parent_span_id"] or ""
        done.update(path)
    return breaks
