"""One span's role, rule label and facts under a set of conventions: what
ingest computes for every span it stores (collector.ingest.decoding), and
what reclassification computes again for a stored span when the conventions
changed (CONVENTIONS.md section 5, collector.runs.reclassify).

Both read the span through the same selection of attributes (`selection`,
which ingest's `recognising` takes too), then the same two steps: the
conventions' `recognise_span`, then `span_facts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import proto
from collector.assembly.attributes import (
    CONTENT_MARKERS,
    ENGINE_KEYS,
    REQUESTED_TAILS,
    SELECTED_EVENTS,
    USAGE_PREFIXES,
)
from collector.assembly.facts import resource_facts, span_facts
from collector.conventions import ConventionSet
from collector.conventions import recognise_span as recognition_of


def selection(conventions: ConventionSet) -> proto.Selection:
    """The attributes proto lifts for recognition and run assembly."""
    return proto.Selection(
        keys=conventions.keys | ENGINE_KEYS,
        prefixes=USAGE_PREFIXES,
        events=SELECTED_EVENTS,
        markers=CONTENT_MARKERS,
        marker_tails=REQUESTED_TAILS,
    )


class Recognised(NamedTuple):
    """What the spans table keeps of a span's recognition."""

    role: str
    rule: str
    facts: dict[str, Any]


def recognise_span(
    conventions: ConventionSet, span: proto.WireSpan, inherited: Mapping[str, str]
) -> Recognised:
    """A decoded span's recognition and facts; `inherited` is the
    `resource_facts` of its resource."""
    recognition = recognition_of(span, conventions)
    facts = span_facts(recognition, span.name, span.attributes, inherited, span.events)
    return Recognised(recognition.role, recognition.label, facts)


def recognise_stored(
    conventions: ConventionSet, stored: Sequence[proto.StoredSpan]
) -> list[Recognised]:
    """Stored spans recognised again, in the order given, from their bytes."""
    decoded = proto.decode_stored(stored, selection(conventions))
    if len(decoded) != len(stored):  # stored spans passed these checks once
        raise ValueError(f"{len(stored) - len(decoded)} stored span(s) no longer decode")
    inherited: dict[int, dict[str, str]] = {}
    found = []
    for span in decoded:
        facts_of = inherited.get(id(span.resource))
        if facts_of is None:
            facts_of = inherited[id(span.resource)] = resource_facts(span.resource)
        found.append(recognise_span(conventions, span, facts_of))
    return found
