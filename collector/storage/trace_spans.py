"""A run's stored spans as typed records, each with its verdict.

Re-runs assembly over the trace, so a reader sees exactly the rule that
classified each span and why it did or did not count. The tree and the
status names for JSON are the API's (api.render.trace_tree).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from operator import attrgetter
from sys import intern
from types import MappingProxyType
from typing import Any

from api.ports import SpanVerdict, TraceSpan, TraceView
from collector.assembly import fact_keys as K
from collector.assembly.facts import SpanFacts
from collector.assembly.membership import aside_key, run_id_for
from collector.assembly.runs import Run, Timers, assemble_trace
from collector.assembly.verdicts import Verdict
from collector.conventions import OTHER, RuleLabel
from proto.view import resource_attributes, span_details

# What run assembly reads of a stored span, in this order (SpanFacts' fields
# after the trace id); the one converter is `to_span_facts`.
FACT_COLUMNS = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "agent_id",
    "name",
    "start_ns",
    "end_ns",
    "status_code",
    "flags",
    "received_at",
    "grader",
    "role",
    "rule",
    "facts",
)


# A stored or committed span row's FACT_COLUMNS after trace_id, in one C call.
fact_values = attrgetter(*FACT_COLUMNS[1:])


def to_span_facts(values: Sequence[Any]) -> SpanFacts:
    """Stored columns (FACT_COLUMNS after trace_id, in order) -> SpanFacts."""
    span_id, parent, agent, name, start, end, code, flags, got, grader, role, rule, facts = values
    return SpanFacts(
        span_id,
        parent,
        intern(agent),  # few distinct values: one copy each, not one per span
        intern(name),
        start,
        end,
        code,
        flags,
        got,
        bool(grader),
        intern(role),
        intern(rule),
        _NO_FACTS if facts == "{}" else json.loads(facts),
    )


_NO_FACTS: Mapping[str, Any] = MappingProxyType({})


def stored_as(runs: Sequence[Run], run_id: str) -> Run | None:
    """The assembled run stored under `run_id`: the one of that id, or the
    one stored aside because a grader's run of another trace holds its run
    key (collector.runs.claims), whose id is that of its aside key."""
    for run in runs:
        if run.id == run_id:
            return run
    for run in runs:
        if run_id_for(run.agent_id, aside_key(run.trace_id, run.run_key)) == run_id:
            return run
    return None


def trace_spans(
    run_id: str, trace_id: str, rows: Sequence[Any], now: float, timers: Timers, max_spans: int
) -> TraceView:
    """Rows of a trace's stored spans (with their resource's bytes as `resource`)
    -> the spans of one of its runs, by start time."""
    facts = [to_span_facts(fact_values(r)) for r in rows]
    run = stored_as(assemble_trace(trace_id, facts, now, timers), run_id)
    if run is None:
        return TraceView([], False)
    ignored = {f.span_id: f.facts[K.IGNORED] for f in facts if K.IGNORED in f.facts}
    members = sorted(
        (r for r in rows if r.span_id in run.verdicts), key=lambda r: (r.start_ns, r.span_id)
    )
    truncated = len(members) > max_spans
    return TraceView(
        [
            TraceSpan(
                span_id=r.span_id,
                parent_span_id=r.parent_span_id or None,
                name=r.name,
                kind=r.kind,
                start_ns=r.start_ns,
                end_ns=r.end_ns,
                status_code=r.status_code,
                status_message=r.status_message,
                resource=resource_attributes(r.resource or b""),
                scope=r.scope_name,
                details=span_details(r.encoded),
                verdict=span_verdict(
                    run.verdicts[r.span_id],
                    r.span_id == run.root_span_id,
                    ignored.get(r.span_id),
                ),
            )
            for r in members[:max_spans]
        ],
        truncated,
    )


def span_verdict(
    verdict: Verdict, root: bool, ignored: Mapping[str, str] | None = None
) -> SpanVerdict:
    """A verdict as the read API shows it, its rule label spelt out, and which
    of its counts and costs were not taken (collector.assembly.facts)."""
    label = RuleLabel.parse(verdict.rule)
    return SpanVerdict(
        role=verdict.role,
        rule=verdict.rule,
        counted=verdict.counted,
        reason=verdict.reason or None,
        root=root,
        clock=verdict.clock or None,
        convention=label.convention,
        rule_role=label.rule_role,
        rule_index=label.rule_index,
        # CONVENTIONS.md section 4: the run's root is never unrecognised
        unrecognised=label.unrecognised and verdict.role == OTHER and not root,
        ignored=ignored,
    )
