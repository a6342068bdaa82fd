"""`/runs/{id}/trace`: a run's stored spans as a tree, with each span's verdict.

Re-runs assembly over the trace so the view shows exactly the rule that
classified each span and why it did or did not count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.ports import TraceView
from api.render import STATUS_NAMES
from collector.assembly.runs import Timers, assemble_trace
from collector.storage.run_writes import FACT_COLUMNS, to_span_facts
from proto.view import resource_attributes, span_details


def build_trace_view(
    run_id: str,
    trace_id: str,
    rows: Sequence[Any],
    now: float,
    timers: Timers,
    max_spans: int,
) -> TraceView:
    facts = [to_span_facts([getattr(r, c) for c in FACT_COLUMNS[1:]]) for r in rows]
    run = next((x for x in assemble_trace(trace_id, facts, now, timers) if x.id == run_id), None)
    if run is None:
        return TraceView([], False)
    members = sorted(
        (r for r in rows if r.span_id in run.verdicts), key=lambda r: (r.start_ns, r.span_id)
    )
    truncated = len(members) > max_spans
    members = members[:max_spans]
    nodes: dict[str, dict[str, Any]] = {}
    for r in members:
        verdict = run.verdicts[r.span_id]
        node = {
            "span_id": r.span_id,
            "parent_span_id": r.parent_span_id or None,
            "name": r.name,
            "kind": r.kind,
            "start": r.start_ns,
            "end": r.end_ns,
            "status": {
                "code": STATUS_NAMES.get(r.status_code, "unset"),
                "message": r.status_message,
            },
            "resource": resource_attributes(r.resource or b""),
            "scope": r.scope_name,
            **span_details(r.encoded),
            "classification": {
                "role": verdict.role,
                "rule": verdict.rule,
                "counted": verdict.counted,
                "reason": verdict.reason or None,
                "root": r.span_id == run.root_span_id,
            },
            "children": [],
        }
        nodes[r.span_id] = node
    roots: list[dict[str, Any]] = []
    for node in nodes.values():
        parent = nodes.get(node["parent_span_id"] or "")
        (parent["children"] if parent else roots).append(node)
    return TraceView(roots, truncated)
