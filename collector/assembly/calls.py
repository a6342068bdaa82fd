"""What a run's counted LLM calls say (docs/runs.md "The fields of a run"):
their tokens and costs, and the tool calls the model requested.

A counted call is the outermost of its LLM spans (two instrumentations of
one call nest); what the outer span does not carry is read from the spans
nested in it, the first that carries it. Run totals (an agent's or the
root's) are read only when no call carries usage: never both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from collector.assembly import fact_keys as K
from collector.assembly.cost import LlmCost
from collector.assembly.facts import MAX_COUNT, SpanFacts
from collector.assembly.tree import RunTree
from collector.conventions import AGENT, LLM


class Requested(NamedTuple):
    """One tool call a counted LLM call requested: a step of a run that has
    no tool span, shown with its LLM span's id and times."""

    name: str
    span: SpanFacts


def nested_calls(tree: RunTree, counted_llm: Sequence[SpanFacts]) -> dict[str, list[SpanFacts]]:
    """Each counted call's span id -> the LLM spans nested in it."""
    nested: dict[str, list[SpanFacts]] = {s.span_id: [] for s in counted_llm}
    for span in tree.ordered:
        if span.role == LLM and span.span_id not in nested:
            outer = tree.nearest(span, (LLM,))
            seen = {span.span_id}  # LLM spans each other's parents would loop forever
            while outer is not None and outer.span_id not in nested and outer.span_id not in seen:
                seen.add(outer.span_id)
                outer = tree.nearest(outer, (LLM,))  # the counted call is the outermost
            if outer is not None and outer.span_id in nested:
                nested[outer.span_id].append(span)
    return nested


def call_usage(
    tree: RunTree, counted_llm: Sequence[SpanFacts], nested: Mapping[str, list[SpanFacts]]
) -> tuple[int | None, int | None, list[LlmCost]]:
    """Usage summed over the counted calls; else the run totals."""
    calls: list[LlmCost] = []
    for span in counted_llm:
        carrier: Mapping[str, Any] | None = None
        priced: Mapping[str, Any] | None = None
        for member in (span, *nested[span.span_id]):  # the first that says wins
            facts = member.facts
            if carrier is None and (K.INPUT_TOKENS in facts or K.OUTPUT_TOKENS in facts):
                carrier = facts
            if priced is None and K.COST in facts:
                priced = facts
        tokens_in = carrier.get(K.INPUT_TOKENS) if carrier is not None else None
        tokens_out = carrier.get(K.OUTPUT_TOKENS) if carrier is not None else None
        reported = priced[K.COST] if priced is not None else None
        if reported == 0 and (tokens_in or tokens_out):
            # A call that used tokens and says they cost nothing was not priced
            # (OpenLIT writes 0 for every model its table lacks): no reported
            # cost, the call is estimated (docs/runs.md; a run that truly
            # spends nothing says so with badge.cost.usd = 0 on its root).
            reported = None
        calls.append(LlmCost(reported, tokens_in, tokens_out))
    with_usage = [c for c in calls if c.input_tokens is not None or c.output_tokens is not None]
    if with_usage:
        ins = [c.input_tokens for c in with_usage if c.input_tokens is not None]
        outs = [c.output_tokens for c in with_usage if c.output_tokens is not None]
        return _total(ins), _total(outs), calls
    for span in tree.ordered:  # outermost agent/root span carrying run totals
        if span.role != AGENT and span is not tree.root:
            continue
        ain = span.facts.get(K.AGG_INPUT_TOKENS, span.facts.get(K.INPUT_TOKENS))
        aout = span.facts.get(K.AGG_OUTPUT_TOKENS, span.facts.get(K.OUTPUT_TOKENS))
        if ain is not None or aout is not None:
            return ain, aout, calls
    return None, None, calls


# Requested calls listed on a run: what its row keeps of its tool calls
# (collector.runs.run_rows.MAX_STORED_TOOL_CALLS); `steps` counts them all. A
# span's 16 KB of output can name ~800 calls, so a long trace of such spans
# must not become millions of records in memory.
MAX_LISTED = 1_000
# The most steps a run records: its `steps` column is a 32-bit integer.
MAX_STEPS = (1 << 31) - 1


def requested_steps(
    counted_llm: Sequence[SpanFacts], nested: Mapping[str, list[SpanFacts]]
) -> tuple[int, list[Requested]]:
    """How many tool calls the counted calls requested, and the first
    MAX_LISTED of them in call order (RUNS.md "Run fields", `steps_source`:
    the steps of a run with no tool span). A call's nested spans repeat its
    request: each call counts once, from the first of its spans that carries
    requested calls."""
    total = 0
    listed: list[Requested] = []
    for span in sorted(counted_llm, key=lambda s: (s.start_ns, s.span_id)):
        for member in (span, *nested[span.span_id]):
            count = member.facts.get(K.REQUESTED)
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                total += count
                room = min(count, MAX_LISTED - len(listed))
                if room > 0:
                    names = list(member.facts.get(K.REQUESTED_NAMES) or ())[:room]
                    names += [""] * (room - len(names))
                    listed += [Requested(str(name), span) for name in names]
                break
    return min(total, MAX_STEPS), listed


def _total(counts: list[int]) -> int | None:
    """A sum of token counts that a signed 64-bit column still holds."""
    return max(-MAX_COUNT, min(sum(counts), MAX_COUNT)) if counts else None
