"""A trace's stored spans -> its runs (docs/runs.md "The fields of a run").

Pure and order-free: every choice sorts by (depth from root, start, span id),
so the same set of spans gives the same runs however they arrived. The only
inputs besides spans are the collector's clock and the two timers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from collector.assembly import attributes as c
from collector.assembly import fact_keys as K
from collector.assembly.calls import call_usage, nested_calls, requested_steps
from collector.assembly.clock import run_times
from collector.assembly.cost import run_cost
from collector.assembly.counting import agent_names, judge
from collector.assembly.facts import SpanFacts, label_outcome
from collector.assembly.membership import find_root, grader_claims, group_runs, run_id_for
from collector.assembly.tree import RunTree
from collector.assembly.verdicts import Verdict
from collector.conventions import AGENT, LLM, OTHER, TOOL, UNRECOGNISED

_INTERNAL = (TOOL, LLM, AGENT)  # roles that show a run's internals
_SPANS, _REQUESTED = "spans", "requested"  # where a run's steps came from (steps_source)


@dataclass(frozen=True, slots=True)
class Timers:
    """The settings assembly depends on besides spans: the two timers, and the
    longest latency a run may have (docs/runs.md "Impossible times")."""

    orphan_grace_s: float = 30.0
    run_timeout_s: float = 300.0
    max_latency_s: float = 86_400.0


class ToolCall(NamedTuple):
    """One counted tool step, in the order the run took them."""

    name: str
    span_id: str
    start_ns: int
    end_ns: int
    status_code: int


class Evaluation(NamedTuple):
    """What the spans say about a run's grading (docs/loop.md "Graded
    outcomes"): the score and explanation of the root's evaluation event, and
    when it was graded (the event's time, else when the grading span came)."""

    score: float | None
    output: str | None
    at: float


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    agent_id: str
    trace_id: str
    run_key: str
    root_span_id: str | None
    task_id: str | None
    version: str | None
    status: str
    success: bool | None
    success_source: str | None
    started_ns: int
    ended_ns: int
    latency_ms: float | None  # None: no true latency (collector.assembly.clock)
    steps: int | None
    steps_source: str | None  # docs/runs.md: "spans", or "requested"; null when steps is
    tool_errors: int
    llm_calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_source: str | None
    error_class: str
    span_count: int
    has_agent_span: bool
    last_received_at: float
    check_at: float | None  # when a timer may change this run; None = never
    tool_calls: tuple[ToolCall, ...] = ()
    evaluation: Evaluation | None = None
    screening_id: str | None = None  # the root's badge.screening.* (docs/screening.md)
    screening_round: int | None = None
    suite_name: str | None = None
    suite_digest: str | None = None
    grader_claim: bool = False  # a grader's span claims it (membership.grader_claims)
    # CONVENTIONS.md section 6: `other` spans no convention knows, the root
    # excepted; and the digest of the conventions it was classified under.
    unrecognised_spans: int = 0
    conventions_digest: str | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict, compare=False, repr=False)


def assemble_trace(
    trace_id: str,
    spans: Sequence[SpanFacts],
    now: float,
    timers: Timers,
    *,
    keep_verdicts: bool = True,
    conventions_digest: str | None = None,
) -> list[Run]:
    """The trace's runs. `keep_verdicts=False` drops each span's verdict once
    the run is counted: storing runs needs none of them, and for a trace of a
    million spans they are a third of what assembly holds. The spans were
    recognised under `conventions_digest` (collector.conventions), which each
    run records."""
    trace = {span.span_id: span for span in spans}
    agents = agent_names(spans)
    runs = [
        _assemble_run(
            trace_id,
            agent_id,
            key,
            members,
            trace,
            agents,
            now,
            timers,
            keep_verdicts,
            conventions_digest,
        )
        for (agent_id, key), members in sorted(group_runs(trace_id, spans).items())
    ]
    return runs


def _assemble_run(
    trace_id: str,
    agent_id: str,
    run_key: str,
    members: list[SpanFacts],
    trace: Mapping[str, SpanFacts],
    agents: frozenset[str],
    now: float,
    timers: Timers,
    keep_verdicts: bool = True,
    conventions_digest: str | None = None,
) -> Run:
    held = grader_claims(run_key, members)
    # docs/runs.md "Runs a grader recorded": only a grader's span may be the
    # root of a run it claims; to this choice the others are spans elsewhere.
    candidates = [s for s in members if s.grader] if held else members
    decision = find_root(
        candidates, trace.keys() - {s.span_id for s in candidates}, timers.orphan_grace_s, now
    )
    root = decision.root
    tree = RunTree(members, root, trace)
    verdicts = judge(tree, agents)
    last_seen = max(s.received_at for s in members)
    status, check_at = _status(root, last_seen, decision.waiting_until, now, timers)
    decider: SpanFacts | None = None
    if status == "running":
        success, source = None, None
    elif status == "timeout":
        success, source, decider = _timeout_outcome(tree, root)
    else:
        success, source, decider = _success(tree, root)
    counted_llm: list[SpanFacts] = []
    tools: list[SpanFacts] = []
    counted_tools: list[SpanFacts] = []
    root_id = root.span_id if root else None
    shows_internals = has_agent_span = (
        False  # docs/runs.md "The fields of a run": null for the root alone
    )
    unrecognised = 0
    for span in tree.ordered:  # one pass over the verdicts
        verdict = verdicts[span.span_id]
        role = verdict.role
        if role not in _INTERNAL:
            if role == OTHER and span.rule == UNRECOGNISED and span.span_id != root_id:
                unrecognised += 1
            continue
        if span.span_id != root_id:
            shows_internals = True
        if role == LLM:
            if verdict.counted:
                counted_llm.append(span)
        elif role == TOOL:
            tools.append(span)
            if verdict.counted:
                counted_tools.append(span)
        elif role == AGENT:
            has_agent_span = True
    counted_tools.sort(key=lambda s: (s.start_ns, s.span_id))
    nested = nested_calls(tree, counted_llm)
    input_tokens, output_tokens, calls = call_usage(tree, counted_llm, nested)
    steps: int | None = len(counted_tools) if shows_internals else None
    steps_source = _SPANS if steps is not None else None
    tool_calls = [
        ToolCall(name, s.span_id, s.start_ns, s.end_ns, s.status_code)
        for s in counted_tools
        for name in (str(s.facts.get(K.TOOL_NAME) or s.name),)
    ]
    asked, requested = requested_steps(counted_llm, nested) if not tools else (0, [])
    if asked and steps is not None:
        # RUNS.md "Run fields": no tool span, so the steps are the tool calls
        # its LLM calls requested (instrumentations that emit no tool span).
        steps, steps_source = asked, _REQUESTED
        tool_calls = [
            ToolCall(r.name, r.span.span_id, r.span.start_ns, r.span.end_ns, 0) for r in requested
        ]
    root_cost = root.facts.get(K.RUN_COST) if root is not None else None
    cost, cost_source = run_cost(root_cost, calls, input_tokens, output_tokens)
    times = run_times(root, members, timers.max_latency_s)
    return Run(
        id=run_id_for(agent_id, run_key),
        agent_id=agent_id,
        trace_id=trace_id,
        run_key=run_key,
        root_span_id=root.span_id if root else None,
        task_id=_task_id(tree),
        version=_version(tree, root),
        status=status,
        success=success,
        success_source=source,
        started_ns=times.start_ns,
        ended_ns=times.end_ns,
        latency_ms=times.latency_ms,
        steps=steps,
        steps_source=steps_source,
        tool_errors=sum(1 for s in counted_tools if s.status_code == c.STATUS_ERROR)
        + sum(1 for s in tools if s.facts.get(K.VALIDATION_FAILED)),
        llm_calls=len(counted_llm),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        cost_source=cost_source,
        error_class=_error_class(root, status),
        span_count=len(members),
        has_agent_span=has_agent_span,
        last_received_at=last_seen,
        check_at=check_at,
        tool_calls=tuple(tool_calls),
        evaluation=_evaluation(root, source, decider),
        **_screening(root),
        grader_claim=held,
        unrecognised_spans=unrecognised,
        conventions_digest=conventions_digest,
        verdicts=verdicts if keep_verdicts else {},
    )


def _status(
    root: SpanFacts | None,
    last_seen: float,
    waiting_until: float | None,
    now: float,
    timers: Timers,
) -> tuple[str, float | None]:
    if root is not None:
        override = root.facts.get(K.RUN_STATUS) if root.grader else None
        if override in {"completed", "failed", "timeout"}:
            return str(override), None
        return "completed", None
    timeout_at = last_seen + timers.run_timeout_s
    if now >= timeout_at:
        return "timeout", None
    return "running", min(t for t in (waiting_until, timeout_at) if t is not None)


def _success(
    tree: RunTree, root: SpanFacts | None
) -> tuple[bool | None, str | None, SpanFacts | None]:
    """(success, source, the span that said so). What a span says is
    `reported`, or `graded` when a grader key sent it (docs/loop.md)."""
    if root is not None and K.RUN_SUCCESS in root.facts:
        return bool(root.facts[K.RUN_SUCCESS]), _said_by(root), root
    for span in tree.ordered:
        if K.RUN_SUCCESS in span.facts:
            return bool(span.facts[K.RUN_SUCCESS]), _said_by(span), span
    task_status = str(tree.first_fact(K.TASK_STATUS) or "").lower()
    if task_status in {"success", "failure"}:
        return task_status == "success", "reported", None
    if root is None:
        return None, None, None
    # The root's evaluation label: its attribute, else its last evaluation event.
    for fact in (K.EVAL_LABEL, K.EVENT_LABEL):
        outcome = label_outcome(root.facts.get(fact))
        if outcome is not None:
            return outcome, _said_by(root), root
    return root.status_code != c.STATUS_ERROR, "status", None


def _timeout_outcome(tree: RunTree, root: SpanFacts | None) -> tuple[bool, str, SpanFacts | None]:
    """A timeout fails the run (docs/runs.md "The fields of a run"). When the
    root is there, a grader key's root said `timeout` (a screening recording an
    infrastructure failure, SCREEN.md section 4) and graded it: the outcome is
    then the grader's, `graded` like every other graded run (issue 42 item 3).
    Without a root nothing can stand in for it: `status`."""
    if root is not None:
        success, source, decider = _success(tree, root)
        if source == "graded" and success is False:
            return False, "graded", decider
    return False, "status", None


def _said_by(span: SpanFacts) -> str:
    return "graded" if span.grader else "reported"


def _evaluation(
    root: SpanFacts | None, source: str | None, decider: SpanFacts | None
) -> Evaluation | None:
    """The root's evaluation event (score, explanation), or a span-graded outcome."""
    if root is not None and K.EVENT_TIME in root.facts:
        facts = root.facts
        at = facts[K.EVENT_TIME] / 1e9 if facts[K.EVENT_TIME] else root.received_at
        return Evaluation(facts.get(K.EVENT_SCORE), facts.get(K.EVENT_EXPLANATION), at)
    if source == "graded" and decider is not None:
        return Evaluation(None, None, decider.received_at)
    return None


def _task_id(tree: RunTree) -> str | None:
    found = tree.first_fact(K.TASK)
    if found is None:
        found = tree.first_fact(K.RESOURCE_TASK)
    return str(found) if found is not None else None


def _version(tree: RunTree, root: SpanFacts | None) -> str | None:
    """The root's badge.agent.version, then its gen_ai.agent.version, then the
    gen_ai.agent.version of the outermost agent span (earliest start, then
    span id), then the root resource's service.version; null without a root."""
    if root is None:
        return None
    for fact in (K.BADGE_VERSION, K.GENAI_VERSION):
        if fact in root.facts:
            return str(root.facts[fact])
    agents = [s for s in tree.ordered if s.role == AGENT]
    if agents:
        outermost = min(agents, key=lambda s: (s.start_ns, s.span_id))
        if K.GENAI_VERSION in outermost.facts:
            return str(outermost.facts[K.GENAI_VERSION])
    version = root.facts.get(K.RESOURCE_VERSION)
    return str(version) if version is not None else None


def _screening(root: SpanFacts | None) -> dict[str, Any]:
    """The root's badge.screening.* as the run's screening fields."""
    if root is None or K.SCREENING not in root.facts:
        return {}
    facts = root.facts
    suite, digest = facts.get(K.SUITE_NAME), facts.get(K.SUITE_DIGEST)
    return {
        "screening_id": str(facts[K.SCREENING]),
        "screening_round": facts.get(K.SCREENING_ROUND),
        "suite_name": str(suite) if suite is not None else None,
        "suite_digest": str(digest) if digest is not None else None,
    }


def _error_class(root: SpanFacts | None, status: str) -> str:
    if status == "timeout" and (root is None or root.facts.get(K.RUN_STATUS) == "timeout"):
        return "timeout"
    if root is None:
        return "none"
    return str(root.facts.get(K.ERROR_TYPE) or root.facts.get(K.EXCEPTION_TYPE) or "none")
