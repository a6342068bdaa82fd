"""badge_spans_unrecognised_total{scope} (CONVENTIONS.md section 6): counted
from committed span rows, parentless spans aside, with at most 50 scope
label values whatever the senders call their scopes."""

from __future__ import annotations

import re

from collector.metrics import Metrics
from collector.writer.unrecognised import MAX_SCOPES, UnrecognisedSpans
from tests.collector.span_rows import span_row


def counted(metrics: Metrics) -> dict[str, float]:
    text = metrics.render().decode()
    found = re.findall(r'badge_spans_unrecognised_total\{scope="([^"]*)"\} (\S+)', text)
    return {scope: float(value) for scope, value in found}


def test_only_unrecognised_spans_with_a_parent_count_by_their_scope() -> None:
    metrics = Metrics()
    spans = UnrecognisedSpans(metrics.spans_unrecognised)
    spans.count(
        [
            span_row("t", "a", scope_name="acme", rule="unrecognised", parent_span_id="r"),
            span_row("t", "b", scope_name="acme", rule="unrecognised", parent_span_id="r"),
            span_row("t", "r", scope_name="acme", rule="unrecognised", parent_span_id=""),
            span_row("t", "c", scope_name="genai", rule="genai:llm[0]", parent_span_id="r"),
            span_row("t", "d", scope_name="genai", rule="genai:applies_to", parent_span_id="r"),
        ]
    )
    assert counted(metrics) == {"acme": 2.0}


def test_past_fifty_scope_values_the_rest_count_as_other() -> None:
    metrics = Metrics()
    spans = UnrecognisedSpans(metrics.spans_unrecognised)
    rows = [
        span_row("t", f"{n}", scope_name=f"lib{n}", rule="unrecognised", parent_span_id="r")
        for n in range(120)
    ]
    spans.count(rows)
    spans.count(rows[:3])  # a scope named before keeps its own value
    spans.count([span_row("t", "x", scope_name="other", rule="unrecognised", parent_span_id="r")])
    values = counted(metrics)
    assert len(values) == MAX_SCOPES == 50
    assert values["lib0"] == 2.0 and "lib60" not in values
    assert values["other"] == 120 - (MAX_SCOPES - 1) + 1
    assert sum(values.values()) == 124
