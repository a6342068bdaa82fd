"""Which tool and LLM spans count, given the rest of the run (docs/runs.md
"Not a step" and "LLM calls that are no call").

A span's own attributes decide most exclusions at ingest (a convention's
`not_a_step` rule, collector.conventions); what needs its neighbours holds
for every family and is decided here (RUNS.md's engine rules):
- a tool named `transfer_to_<agent>` (or `transfer_back_to_`, `handoff_to_`)
  whose <agent> is an agent of the trace, or whose `gen_ai.tool.type` says
  transfer or handoff, is a handoff (OpenAI Swarm / Agents SDK, AutoGen
  Swarm, LangGraph swarm and supervisor, Semantic Kernel's handoffs);
- a tool span inside another tool span is the same call seen twice (an MCP
  client span under `execute_tool`, two instrumentations, the MCP server's
  span of the call in another service) only for the same tool: call ids
  are often unique per agent only, so a repeated id alone proves nothing,
  and a tool that calls another tool, or an agent used as a tool whose
  agent calls tools, counts every call. The tool span above is looked for
  in the trace's whole span tree, whatever run, agent or service it is in
  (issue 38: one tool call seen by several services counts once);
- an LLM-kind span with no usage, messages or output, beside a call that has
  them, prepares the request and is no second call (OpenInference marks every
  dispatcher span of an LLM object LLM, llama-index's `_prepare_chat_with_tools`
  among them); an LLM span with what was sent but no usage and no answer,
  followed by a sibling of the same model that reports the answer, is the
  request half of one call whose answer was reported apart (Pydantic
  Logfire's streamed calls: the request span, then a log with the usage and
  output); a failed call (status ERROR) always counts;
- an LLM span inside another LLM span is one call seen twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from collector.assembly import attributes as c
from collector.assembly import fact_keys as K
from collector.assembly.clock import clock_problem
from collector.assembly.facts import SpanFacts
from collector.assembly.tree import RunTree
from collector.assembly.verdicts import Verdict
from collector.conventions import AGENT, LLM, NOT_A_STEP, TOOL

_INTERNAL = (TOOL, LLM, AGENT)
_NOT_A_NAME = re.compile(r"[^0-9a-z]+")


def agent_name_key(name: str) -> str:
    """An agent's name as tool names spell it: `Billing Agent` is
    `transfer_to_billing_agent`, `TravelAgent` is `transfer_to_TravelAgent`."""
    return _NOT_A_NAME.sub("_", name.lower()).strip("_")


def bare_names(tool: str) -> set[str]:
    """The tool's name, and its name without a namespace (`Plugin-name`,
    `server.name`, `server__name`), lower-cased."""
    found = {tool.strip().lower()}
    for separator in c.TOOL_NAMESPACE_SEPARATORS:
        if separator in tool:
            found.add(tool.rsplit(separator, 1)[1].strip().lower())
    return found


def agent_names(spans: Sequence[SpanFacts]) -> frozenset[str]:
    """The names of the agents whose spans are in the trace."""
    return frozenset(
        agent_name_key(str(s.facts[K.AGENT_NAME]))
        for s in spans
        if s.role == AGENT and K.AGENT_NAME in s.facts
    )


def judge(tree: RunTree, agents: frozenset[str]) -> dict[str, Verdict]:
    """Each span's verdict: counted or not, and the rule that decided it."""
    verdicts: dict[str, Verdict] = {}
    # A trace calls the same few tools many times: the name rule is read once
    # a name (bench/assembly.py, 10,000 spans: 36 -> 32 ms with the clock fast path).
    handoffs: dict[tuple[object, object], str] = {}
    answers: dict[str, dict[str, str]] = {}  # parent -> {request span: its answer's span}
    for span in tree.ordered:
        role = span.role
        reason = _not_a_step(span) if role == TOOL else ""
        counted = not reason and (role == TOOL or role == LLM)
        if counted and role == TOOL:
            named = (span.facts.get(K.TOOL_TYPE), span.facts.get(K.TOOL_NAME))
            handoff = handoffs.get(named)
            if handoff is None:
                handoff = handoffs[named] = _handoff(span, agents)
            reason = handoff or _repeated_tool(tree, span)
        elif counted:
            reason = (
                _repeated_llm(tree, span)
                or _preparation(tree, span)
                or _answered_apart(tree, span, answers)
            )
        counted = counted and not reason
        verdicts[span.span_id] = Verdict(role, span.rule, counted, reason, clock_problem(span))
    return verdicts


_NOT_A_STEP_RULE = f":{NOT_A_STEP}["


def _not_a_step(span: SpanFacts) -> str:
    """A tool its convention says is no step (a `not_a_step` rule; spans
    stored before conventions say why in their facts)."""
    if _NOT_A_STEP_RULE in span.rule:
        return f"not a step: {span.rule}"
    why = span.facts.get(K.WHY_NOT)
    return str(why) if why else ""


def _handoff(span: SpanFacts, agents: frozenset[str]) -> str:
    kind = str(span.facts.get(K.TOOL_TYPE) or "").lower()
    if "transfer" in kind or "handoff" in kind:
        return f"gen_ai.tool.type={span.facts['ttype']}: a handoff, not a step"
    tool = span.facts.get(K.TOOL_NAME)
    if tool is None:
        return ""
    for bare in bare_names(str(tool)):
        for prefix in c.HANDOFF_PREFIXES:
            if bare.startswith(prefix) and agent_name_key(bare[len(prefix) :]) in agents:
                return f"{tool}: a handoff to agent {bare[len(prefix) :]}, not a step"
    return ""


def _repeated_tool(tree: RunTree, span: SpanFacts) -> str:
    outer = tree.nearest(span, (TOOL, AGENT), in_trace=True)
    if outer is None or outer.role != TOOL:
        return ""  # none, or an agent between: that agent's own call
    outer_name, inner_name = outer.facts.get(K.TOOL_NAME), span.facts.get(K.TOOL_NAME)
    if outer_name is not None and inner_name is not None and outer_name != inner_name:
        return ""  # a tool that calls another tool: both count
    outer_call, inner_call = outer.facts.get(K.CALL_ID), span.facts.get(K.CALL_ID)
    if outer_call is not None and inner_call is not None:
        same = outer_call == inner_call
    else:
        same = outer_name is not None and outer_name == inner_name
    if not same:
        return ""
    where = "" if outer.span_id in tree.by_id else " (in another run of the trace)"
    return f"nested duplicate of tool span {outer.span_id}{where}"


def _repeated_llm(tree: RunTree, span: SpanFacts) -> str:
    outer = tree.nearest(span, _INTERNAL)
    if outer is not None and outer.role == LLM:
        return f"nested duplicate of LLM span {outer.span_id}"
    return ""


def _preparation(tree: RunTree, span: SpanFacts) -> str:
    if not span.facts.get(K.SAYS_NOTHING) or span.status_code == c.STATUS_ERROR:
        return ""
    model = span.facts.get(K.MODEL)
    for other in tree.llm_children.get(span.parent_span_id, ()):
        if other.role != LLM or other is span or other.facts.get(K.SAYS_NOTHING):
            continue
        if model is not None and other.facts.get(K.MODEL) not in (None, model):
            continue
        return (
            f"no usage, messages or output beside LLM span {other.span_id}: "
            "the request being prepared, not a call"
        )
    return ""


def _answered_apart(tree: RunTree, span: SpanFacts, answers: dict[str, dict[str, str]]) -> str:
    """The request half of a call whose answer a later sibling reports."""
    if not span.facts.get(K.NO_ANSWER) or span.status_code == c.STATUS_ERROR:
        return ""
    parent = span.parent_span_id
    paired = answers.get(parent)
    if paired is None:
        paired = answers[parent] = _pair_requests(tree.llm_children.get(parent, ()))
    answer = paired.get(span.span_id)
    if answer is None:
        return ""
    return (
        f"its answer is LLM span {answer} (usage and output reported apart): "
        "one call, counted there"
    )


def _pair_requests(siblings: Sequence[SpanFacts]) -> dict[str, str]:
    """Requests (what was sent, no answer, not failed) paired with the
    answers that follow them, among LLM spans of one parent in start order:
    each answer closes the earliest request still open of the same model
    (or of one naming none). An answer with no open request is a call of its
    own; a request no answer follows counts as one."""
    pairs: dict[str, str] = {}
    waiting: list[SpanFacts] = []
    for span in siblings:
        if span.role != LLM:
            continue
        facts = span.facts
        if facts.get(K.NO_ANSWER):
            if span.status_code != c.STATUS_ERROR:
                waiting.append(span)
            continue
        if facts.get(K.SAYS_NOTHING) or not waiting:
            continue
        model = facts.get(K.MODEL)
        for index, request in enumerate(waiting):
            asked = request.facts.get(K.MODEL)
            if model is None or asked is None or asked == model:
                pairs[request.span_id] = span.span_id
                del waiting[index]
                break
    return pairs
