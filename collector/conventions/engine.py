"""The active conventions, compiled once, and recognition of a span
(CONVENTIONS.md section 4).

For each span the conventions are walked in order and, within each whose
`applies_to` holds, its rules in the order not_a_step, tool, llm, agent; the
first rule that matches decides. All rules of all conventions sit in one
list in that order, each with the attribute keys it needs (one must be on the
span for it to match, conditions.Condition.needs): a span is tried only
against the rules a key of its own points to, plus the few that need none
(span names, scopes), in their global order. That keeps the cost per span
near what its own attributes select, however many conventions are loaded
(section 8; bench/recognition.py).

And spans repeat themselves: a decision depends only on what the conditions
read (the values they test, the keys whose presence they test, the span-name
regexes' answers, kind, status, scope and the resource keys they read), so it
is remembered by that signature. A span then costs its signature, one
lookup, and the few sources its role reads (a tool's name, tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from collector.conventions import defaults
from collector.conventions.files import Convention, Rule, Usage
from collector.conventions.recognition import AGENT, LLM, NOT_A_STEP, OTHER, TOOL, Recognition
from collector.conventions.sources import Source
from collector.conventions.span import SpanView

_ROLE_OF_RULE = {NOT_A_STEP: TOOL, TOOL: TOOL, LLM: LLM, AGENT: AGENT}
# Decisions and span names remembered, each: past it the memory starts over.
# A trace's spans share a few dozen signatures (bench/recognition.py: 2,706
# recorded spans of 13 frameworks have 210, and 345 names).
_REMEMBERED = 20_000

Decide = Callable[[SpanView], Recognition]


class _Entry:
    """One rule in the global order, ready to decide a span."""

    __slots__ = ("convention", "position", "rule", "decide")

    decide: Callable[[SpanView], Recognition]

    def __init__(self, position: int, convention: int, owner: Convention, rule: Rule) -> None:
        self.position = position
        self.convention = convention
        self.rule = rule
        role = _ROLE_OF_RULE[rule.role]
        usage = _usage(owner.usage)
        name, ident, model = rule.tool_name, rule.call_id, rule.model
        tool_name = (name or defaults.TOOL_NAME).read
        call_id = (ident or defaults.CALL_ID).read
        model_of = (model or defaults.MODEL).read
        tokens_in, tokens_out, cost = (source.read for source in usage)
        head = (role, owner.name, rule.role, rule.index, "")
        if role == TOOL:
            self.decide = lambda span: Recognition(*head, tool_name(span), call_id(span))
        elif role == LLM:
            self.decide = lambda span: Recognition(
                *head, None, None, model_of(span), tokens_in(span), tokens_out(span), cost(span)
            )
        else:  # an agent span's usage is its run's totals
            self.decide = lambda span: Recognition(
                *head, None, None, None, tokens_in(span), tokens_out(span)
            )


def _usage(usage: Usage) -> tuple[Source, Source, Source]:
    """A convention's usage sources, the built-in GenAI keys where it names none."""
    return (
        usage.input_tokens or defaults.INPUT_TOKENS,
        usage.output_tokens or defaults.OUTPUT_TOKENS,
        usage.cost_usd or defaults.COST_USD,
    )


class Recognizer:
    """The conventions in their active order, compiled for recognition."""

    def __init__(self, conventions: Sequence[Convention]) -> None:
        self.conventions = tuple(conventions)
        entries: list[_Entry] = []
        for number, convention in enumerate(self.conventions):
            for rule in convention.rules:
                entries.append(_Entry(len(entries), number, convention, rule))
        self._entries = tuple(entries)
        self._applies = tuple(c.applies_to.test if c.applies_to else None for c in conventions)
        # Conventions whose explicit applies_to makes their spans known (section 4).
        self._families = tuple(
            (number, c.name, _usage(c.usage))
            for number, c in enumerate(self.conventions)
            if c.applies_to is not None
        )
        by_key: dict[str, list[int]] = {}
        always: list[int] = []
        for entry in entries:
            needs = entry.rule.when.needs
            if needs is None:
                applies_to = self.conventions[entry.convention].applies_to
                needs = applies_to.needs if applies_to is not None else None
            if needs is None:
                always.append(entry.position)
            else:
                for key in needs:
                    by_key.setdefault(key, []).append(entry.position)
        self._by_key = {key: frozenset(found) for key, found in by_key.items()}
        self._always = tuple(always)
        self._default_usage = _usage(Usage())
        self._as_other: dict[int | None, Decide] = {None: _other_decision("", self._default_usage)}
        for number, name, usage in self._families:
            self._as_other[number] = _other_decision(name, usage)
        keys: set[str] = set(defaults.KEYS)
        for convention in self.conventions:
            keys |= convention.keys
        self.keys = frozenset(keys)
        # What decisions depend on, for the signature.
        conditions = [c.applies_to for c in conventions if c.applies_to is not None]
        conditions += [entry.rule.when for entry in entries]
        self._valued = frozenset().union(*(c.valued for c in conditions))
        self._present = frozenset().union(*(c.keys for c in conditions)) - self._valued
        self._resource_keys = tuple(
            sorted(frozenset().union(*(c.resource_keys for c in conditions)))
        )
        patterns = {p.pattern: p for c in conditions for p in c.names}
        self._name_tests = tuple(p.search for p in patterns.values())
        self._names: dict[str, int] = {}  # span name -> its answers' number
        self._answers: dict[tuple[bool, ...], int] = {}  # the regexes' answers, numbered
        self._decisions: dict[Hashable, Decide] = {}

    def recognise(
        self,
        name: str,
        kind: int,
        status: int,
        scope: str,
        attrs: Mapping[str, Any],
        resource: Mapping[str, Any],
    ) -> Recognition:
        """Which role the span plays, by which rule, and what that role reads."""
        span = SpanView(name, kind, status, scope, attrs, resource)
        signature = self._signature(span)
        decisions = self._decisions
        try:
            decide = decisions.get(signature)
        except TypeError:  # a tested value that is a list or a map: no memory
            return self._decide(span)(span)
        if decide is None:
            decide = self._decide(span)
            if len(decisions) >= _REMEMBERED:
                decisions.clear()
            decisions[signature] = decide
        return decide(span)

    def _signature(self, span: SpanView) -> Hashable:
        """Everything the conditions read of the span: equal signatures, equal decisions."""
        names = self._names
        said = names.get(span.name)
        if said is None:  # the name regexes' answers, as a number: hashed in no time
            if len(names) >= _REMEMBERED:
                names.clear()
            answers = tuple(test(span.name) is not None for test in self._name_tests)
            said = names[span.name] = self._answers.setdefault(answers, len(self._answers))
        valued, present = self._valued, self._present
        parts: list[Hashable] = []
        for key, value in span.attrs.items():
            if key in valued:
                parts.append((key, value, value.__class__))  # True and 1 differ here
            elif key in present:
                parts.append(key)
        resource = span.resource
        held = tuple(resource.get(key) for key in self._resource_keys)
        return said, span.kind, span.status, span.scope, held, tuple(parts)

    def _decide(self, span: SpanView) -> Decide:
        """The rule that decides the span (its entry's `decide`), or how an
        `other` span is read: the walk of section 4."""
        by_key = self._by_key
        attrs = span.attrs
        found: set[int] | None = None
        for key in attrs:
            hit = by_key.get(key)
            if hit is not None:
                if found is None:
                    found = set(hit)
                else:
                    found |= hit
        if found is None:
            order: Sequence[int] = self._always
        else:
            found.update(self._always)
            order = sorted(found)
        entries, applies = self._entries, self._applies
        held: dict[int, bool] = {}
        for position in order:
            entry = entries[position]
            number = entry.convention
            test = applies[number]
            if test is not None:
                ok = held.get(number)
                if ok is None:
                    ok = held[number] = test(span)
                if not ok:
                    continue
            if entry.rule.when.test(span):
                return entry.decide
        return self._as_other[self._family(span, held)]

    def _family(self, span: SpanView, held: dict[int, bool]) -> int | None:
        """No rule matched: the first convention whose explicit applies_to
        holds knows the span (its number), else none does."""
        applies = self._applies
        for number, _, _ in self._families:
            ok = held.get(number)
            if ok is None:
                test = applies[number]
                ok = test is not None and test(span)
            if ok:
                return number
        return None


def _other_decision(family: str, usage: tuple[Source, Source, Source]) -> Decide:
    """An `other` span: known to `family` (or to none), its run totals read
    where that family (else the GenAI keys) says."""
    tokens_in, tokens_out = usage[0].read, usage[1].read
    return lambda span: Recognition(
        OTHER, "", "", -1, family, None, None, None, tokens_in(span), tokens_out(span)
    )
