"""Per-span facts computed once at ingest and stored as one small JSON column.

Everything run assembly needs from a span is reduced here, so recomputing a
run never re-reads the encoded span: what its convention read (a tool's name
and call id, a model, tokens, cost: the span's `Recognition`) and what the
engine reads of every span (run ids, task ids, outcomes, versions, agent
names, collector.assembly.attributes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from collector.assembly import attributes as c
from collector.assembly import fact_keys as K
from collector.assembly.requested import MAX_NAMES, requested_calls
from collector.conventions import AGENT, LLM, TOOL, Recognition
from proto import WireEvent


class SpanFacts(NamedTuple):
    """One stored span as run assembly sees it.

    A NamedTuple (immutable, built in one C call): one is made per span at
    ingest and per stored span on every reload, where a frozen dataclass's
    field-by-field __init__ cost four times as much.
    """

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
    facts: Mapping[str, Any] = MappingProxyType({})


def first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


# What a stored count or price can be. A count outside 0..MAX_COUNT is no
# real usage and a run column (signed 64-bit) could not hold it: absent. A cost
# is any finite number >= 0 (SCREEN.md section 3, CONVENTIONS.md section 3),
# counted at most MAX_COST_USD: a run's cost never passes it either
# (collector.assembly.cost), so the kept sums over an agent's runs (the
# run_totals triggers) stay finite for any number of runs, where 1e308 + 1e308
# is an error on PostgreSQL and inf on SQLite.
MAX_COUNT = (1 << 63) - 1
MAX_COST_USD = 1e12


def as_int(value: Any) -> int | None:
    """A count; numbers may arrive as strings (docs/runs.md "How a span is
    classified"). Negative is no count (issue 37 item 12): None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        # An integer (or integer text) as it is: through a float, 2^63-1 became 2^63
        # and fell outside the range (issue 37 item 13).
        number = value if isinstance(value, int) else int(value)
    except OverflowError:  # an infinite double: no count (found by bench/fuzz.py)
        return None
    except (TypeError, ValueError):
        try:
            number = int(float(value))  # "12.0", 12.5
        except (TypeError, ValueError, OverflowError):  # not a number, NaN, infinite
            return None
    return number if 0 <= number <= MAX_COUNT else None


def as_float(value: Any) -> float | None:
    """A number of either sign (an evaluation's score); not for costs: `as_cost`."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if -MAX_COST_USD <= number <= MAX_COST_USD else None  # NaN fails both


def as_cost(value: Any) -> float | None:
    """A cost in USD: a finite number >= 0, above MAX_COST_USD counted as
    MAX_COST_USD. A negative one is no cost (issue 37 item 12): None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not (math.isfinite(number) and number >= 0):
        return None
    return min(number + 0.0, MAX_COST_USD)  # + 0.0: -0.0 reads 0.0


def negative(value: Any) -> bool:
    """A number below 0: what `as_int` and `as_cost` refuse and the trace view
    names (`classification.ignored`), as the screener ignores it in an answer."""
    if value is None or isinstance(value, bool):
        return False
    try:
        return float(value) < 0
    except (TypeError, ValueError, OverflowError):
        return isinstance(value, int) and value < 0  # beyond a float's range


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return None


# attribute key -> (fact, rank): where docs/runs.md says "a -> b -> c", a ranks 0.
_FACT_KEYS: dict[str, tuple[str, int]] = {}
for _fact, _keys in (
    (K.AGG_INPUT_TOKENS, c.AGG_INPUT_KEYS),
    (K.AGG_OUTPUT_TOKENS, c.AGG_OUTPUT_KEYS),
    (K.TASK, c.TASK_KEYS),
    (K.RUN_COST, ("badge.cost.usd",)),
    (K.RUN_ID, ("badge.run.id",)),
    (K.RUN_SUCCESS, ("badge.run.success",)),
    (K.TASK_STATUS, ("gen_ai.task.status",)),
    (K.EVAL_LABEL, ("gen_ai.evaluation.score.label",)),
    (K.RUN_STATUS, ("badge.run.status",)),
    (K.ERROR_TYPE, ("error.type",)),
    (K.VALIDATION_FAILED, (c.VALIDATION_KEY,)),
    (K.BADGE_VERSION, c.VERSION_KEYS[:1]),
    (K.GENAI_VERSION, c.VERSION_KEYS[1:]),
    (K.AGENT_NAME, c.AGENT_NAME_KEYS),
    (K.SCREENING, c.SCREENING_KEYS[:1]),
    (K.SCREENING_ROUND, c.SCREENING_KEYS[1:2]),
    (K.SUITE_NAME, c.SCREENING_KEYS[2:3]),
    (K.SUITE_DIGEST, c.SCREENING_KEYS[3:]),
    (K.TOOL_TYPE, c.TOOL_TYPE_KEYS),
):
    for _rank, _key in enumerate(_keys):
        _FACT_KEYS[_key] = (_fact, _rank)


def _validation_failed(value: Any) -> bool | None:
    return True if str(value).lower() == "validation" else None


_CONVERT: dict[str, Callable[[Any], Any]] = {
    K.AGG_INPUT_TOKENS: as_int,
    K.AGG_OUTPUT_TOKENS: as_int,
    K.RUN_COST: as_cost,
    K.RUN_SUCCESS: as_bool,
    K.VALIDATION_FAILED: _validation_failed,
    K.SCREENING_ROUND: as_int,
}
# Counts and costs: one present but negative is ignored and named (K.IGNORED).
_FIGURES = frozenset(
    {K.INPUT_TOKENS, K.OUTPUT_TOKENS, K.AGG_INPUT_TOKENS, K.AGG_OUTPUT_TOKENS, K.COST, K.RUN_COST}
)


def resource_facts(resource: Mapping[str, Any]) -> dict[str, str]:
    """What a span inherits from its resource: computed once per resource."""
    found: dict[str, str] = {}
    run = _text(resource.get("badge.run.id"))
    if run is not None:
        found[K.RUN_ID] = run
    task = _text(first(resource, c.TASK_KEYS))
    if task is not None:
        found[K.RESOURCE_TASK] = task
    version = _text(resource.get(c.RESOURCE_VERSION_KEY))
    if version is not None:
        found[K.RESOURCE_VERSION] = version
    return found


def span_facts(
    recognition: Recognition,
    name: str,
    attrs: Mapping[str, Any],
    inherited: Mapping[str, str],
    events: Sequence[WireEvent] = (),
) -> dict[str, Any]:
    """The facts of one span; they hold only what is present.

    `recognition` is what its convention said (collector.conventions); the
    rest is one pass over the lifted attributes (a handful per span): this
    runs for every span at ingest. `inherited` is `resource_facts` of its
    resource; `events` are the span's exception and evaluation events.
    """
    best: dict[str, tuple[int, str, Any]] = {}
    for key, value in attrs.items():
        spec = _FACT_KEYS.get(key)
        if spec is None or value is None or value == "":
            continue
        fact, rank = spec
        held = best.get(fact)
        if held is None or rank < held[0]:
            best[fact] = (rank, key, value)
    facts: dict[str, Any] = {}
    ignored: dict[str, str] = {}
    for fact, (_, key, value) in best.items():
        converted = _CONVERT[fact](value) if fact in _CONVERT else str(value)
        if converted is not None:
            facts[fact] = converted
        elif fact in _FIGURES and negative(value):
            ignored[key] = "negative"
    for fact, value in inherited.items():  # a span's own badge.run.id wins
        facts.setdefault(fact, value)
    _keep_role_facts(recognition, name, attrs, facts)
    _name_negative_usage(recognition, attrs, ignored)
    if ignored:
        facts[K.IGNORED] = ignored
    if events:
        facts.update(event_facts(events))
    return facts


def usage_count(value: Any) -> int | None:
    """A token count a convention read (CONVENTIONS.md section 3): an integer
    >= 0, a numeric string as its number; anything else is ignored."""
    count = as_int(value)
    return count if count is not None and count >= 0 else None


def usage_cost(value: Any) -> float | None:
    """A cost a convention read: a finite number >= 0 (at most MAX_COST_USD),
    else ignored."""
    return as_cost(value)


def _name_negative_usage(
    recognition: Recognition, attrs: Mapping[str, Any], ignored: dict[str, str]
) -> None:
    """A negative count or cost its convention read is ignored (issue 37 item
    12) and named for the trace view: by the attribute that holds it, or by
    the usage field when it came from inside a JSON document."""
    if (
        recognition.input_tokens is None
        and recognition.output_tokens is None
        and recognition.cost_usd is None
    ):
        return  # most spans read no usage: nothing to look at (bench/ingest.py --stages)
    for field, value in (
        ("input_tokens", recognition.input_tokens),
        ("output_tokens", recognition.output_tokens),
        ("cost_usd", recognition.cost_usd),
    ):
        if negative(value):
            held = next((key for key, v in attrs.items() if v is value or v == value), None)
            ignored[held or f"{recognition.convention or 'usage'}.{field}"] = "negative"


# Facts only one role needs: an agent's name (a handoff tool names it), a
# tool's type, and the usage its convention read.
_ROLE_FACTS = {K.AGENT_NAME: AGENT, K.TOOL_TYPE: TOOL}


def _keep_role_facts(
    recognition: Recognition, name: str, attrs: Mapping[str, Any], facts: dict[str, Any]
) -> None:
    role = recognition.role
    for fact, wanted in _ROLE_FACTS.items():
        if fact in facts and role != wanted:
            del facts[fact]
    if role == TOOL:
        _text_fact(facts, K.TOOL_NAME, recognition.tool_name)
        _text_fact(facts, K.CALL_ID, recognition.call_id)
        return
    # Tokens: an LLM call's own, or an agent's (or the root's) run totals.
    for fact, value in (
        (K.INPUT_TOKENS, recognition.input_tokens),
        (K.OUTPUT_TOKENS, recognition.output_tokens),
    ):
        count = usage_count(value)
        if count is not None:
            facts[fact] = count
    if role == AGENT and K.AGENT_NAME not in facts and name.startswith(c.AGENT_SPAN_PREFIX):
        agent = name[len(c.AGENT_SPAN_PREFIX) :].strip()
        if agent:
            facts[K.AGENT_NAME] = agent  # the GenAI span name: `invoke_agent {agent name}`
    if role == LLM:
        _text_fact(facts, K.MODEL, recognition.model)
        cost = usage_cost(recognition.cost_usd)
        if cost is not None:
            facts[K.COST] = cost
        said = _what_it_says(recognition, attrs)
        if said is not _ANSWER:
            facts[K.SAYS_NOTHING if said is None else K.NO_ANSWER] = 1
        requested = requested_calls(attrs)
        if requested:
            facts[K.REQUESTED] = len(requested)
            facts[K.REQUESTED_NAMES] = requested[:MAX_NAMES]


def _text_fact(facts: dict[str, Any], fact: str, value: Any) -> None:
    if value is not None and value != "":
        facts[fact] = value if isinstance(value, str) else str(value)


_ANSWER, _REQUEST = "answer", "request"


def _what_it_says(recognition: Recognition, attrs: Mapping[str, Any]) -> str | None:
    """What an LLM span reports of its call (docs/runs.md "LLM calls that are
    no call"): usage, a cost or what came back (`_ANSWER`: a call's span
    carries one of them); only what was sent (`_REQUEST`: the request of a
    call whose answer may be reported apart); or nothing (None)."""
    if (
        recognition.input_tokens is not None
        or recognition.output_tokens is not None
        or recognition.cost_usd is not None
    ):
        return _ANSWER
    said = None
    for key in attrs:  # one prefix test per key, as for any span
        if key.startswith(_SAYS):
            if key.startswith(_ANSWERS):
                return _ANSWER
            said = _REQUEST
    return said


_SAYS = c.USAGE_PREFIXES + c.CONTENT_MARKERS
_ANSWERS = c.USAGE_PREFIXES + c.OUTPUT_MARKERS


def label_outcome(label: Any) -> bool | None:
    """An evaluation label as an outcome (docs/loop.md "Graded outcomes"):
    pass/passed/true/success/correct, fail/failed/false/failure/incorrect."""
    text = str(label).strip().lower() if label is not None else ""
    if text in c.PASS_LABELS:
        return True
    if text in c.FAIL_LABELS:
        return False
    return None


def event_facts(events: Sequence[WireEvent]) -> dict[str, Any]:
    """`exc`: the type of the first exception event. `evl`, `evs`, `evx`,
    `evt`: label, score, explanation and time (ns) of the evaluation event
    that counts, the last by time with a pass/fail label (else the last)."""
    found: dict[str, Any] = {}
    evaluations: list[tuple[int, int, int]] = []  # (labelled, time, position)
    for index, event in enumerate(events):
        if event.name == c.EXCEPTION_EVENT and K.EXCEPTION_TYPE not in found:
            kind = event.attributes.get("exception.type")
            if isinstance(kind, str) and kind:
                found[K.EXCEPTION_TYPE] = kind
        elif event.name == c.EVALUATION_EVENT:
            labelled = label_outcome(event.attributes.get(c.EVALUATION_LABEL_KEY)) is not None
            evaluations.append((int(labelled), event.time_ns, index))
    if evaluations:
        _, _, index = max(evaluations)
        chosen = events[index].attributes
        label = chosen.get(c.EVALUATION_LABEL_KEY)
        if label is not None and label != "":
            found[K.EVENT_LABEL] = str(label)
        score = as_float(chosen.get(c.EVALUATION_SCORE_KEY))
        if score is not None:
            found[K.EVENT_SCORE] = score
        explanation = chosen.get(c.EVALUATION_EXPLANATION_KEY)
        if explanation is not None and explanation != "":
            found[K.EVENT_EXPLANATION] = str(explanation)
        found[K.EVENT_TIME] = events[index].time_ns
    return found


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)
