"""The coverage warning's threshold and sentence (CONVENTIONS.md section 6):
more than 10% of the spans unrecognised, the scopes named most first."""

from __future__ import annotations

from api.ports import Coverage, ScopeCoverage
from api.views.coverage import coverage_answer, warning_of


def figures(spans: int, unrecognised: dict[str, int]) -> Coverage:
    scopes = [
        ScopeCoverage(scope, n, n, {"other": n}, {})
        for scope, n in sorted(unrecognised.items(), key=lambda kv: -kv[1])
    ]
    return Coverage(10, spans, sum(unrecognised.values()), scopes, ())


def test_exactly_a_tenth_unrecognised_is_no_warning_and_a_little_more_is() -> None:
    assert warning_of(figures(1000, {"acme.tracer": 100})) is None
    warning = warning_of(figures(1000, {"acme.tracer": 104}))
    assert warning is not None and warning.unrecognised_share == 0.104
    # "10%" would read as the threshold itself
    assert warning.message.startswith("10.4% of this agent's spans")


def test_the_sentence_names_the_scope_as_the_spec_shows_it() -> None:
    warning = warning_of(figures(100, {"acme.tracer": 41}))
    assert warning is not None
    assert warning.message == (
        "41% of this agent's spans, from scope `acme.tracer`, were not recognised"
    )
    assert warning.scopes == ["acme.tracer"]


def test_past_three_scopes_the_sentence_counts_the_rest() -> None:
    warning = warning_of(figures(100, {"a": 20, "b": 10, "c": 5, "d": 2, "": 1}))
    assert warning is not None
    assert warning.message == (
        "38% of this agent's spans, from scopes `a`, `b`, `c` and 2 more, were not recognised"
    )
    assert warning.scopes == ["a", "b", "c", "d", ""]


def test_unrecognised_spans_no_scope_of_the_agent_holds_still_warn() -> None:
    warning = warning_of(Coverage(10, 100, 30, (), ()))
    assert warning is not None
    assert warning.message == "30% of this agent's spans were not recognised"


def test_an_agent_without_spans_has_no_share_and_no_warning() -> None:
    empty = Coverage(0, 0, 0, (), ())
    assert warning_of(empty) is None
    answer = coverage_answer("a", empty)
    assert answer.unrecognised_share is None and answer.warning is None
