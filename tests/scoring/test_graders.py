"""The screening graders (SCREEN.md section 2): hand-computed cases, then properties."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import scoring
from scoring import policy
from scoring.graders import GRADERS, Grade, expected_text, grade, json_equal, norm, words

TEN = "alpha beta gamma delta epsilon zeta eta theta iota kappa"


def passes(grader: str, output: str | None, expected: object) -> bool:
    return grade(grader, output, expected, "none").passed


# -- norm, words, expected_text ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normed"),
    [
        ("  Hello\t\n  World  ", "hello world"),
        ("ﬁsh", "fish"),  # NFKC: the ligature is two letters
        ("１２３", "123"),  # NFKC: full-width digits
        ("Straße", "strasse"),  # casefold, not lower: ß folds to ss
        ("STRASSE", "strasse"),
        ("a\u3000b\u00a0c", "a b c"),  # ideographic and no-break spaces are spaces
        ("", ""),
    ],
)
def test_norm(text: str, normed: str) -> None:
    assert norm(text) == normed


def test_words_are_runs_of_letters_and_digits() -> None:
    # The underscore and the apostrophe split words; digits are words.
    assert words("Don't stop_me NOW, 42 times!") == {"don", "t", "stop", "me", "now", "42", "times"}
    assert words("...!") == set()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("as is", "as is"),
        (42, "42"),
        (1.5, "1.5"),
        (True, "true"),
        (None, "null"),
        ({"b": 1, "a": [1, 2]}, '{"b":1,"a":[1,2]}'),  # the file's key order, compact
        ({"ville": "Orléans"}, '{"ville":"Orléans"}'),  # not escaped to \\u00e9
    ],
)
def test_expected_text(value: object, text: str) -> None:
    assert expected_text(value) == text


# -- each grader, by hand --------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "passed"),
    [
        (" paris\n", "Paris", True),
        ("Paris.", "Paris", False),
        ("ﬁve", "five", True),
        ("１２３", "123", True),
        ("STRASSE", "Straße", True),
        ("4", 4, True),  # a non-string key is compared as its JSON text
        ('{"a": 1}', {"a": 1}, False),  # ... which is compact: '{"a":1}'
    ],
)
def test_exact(output: str, expected: object, passed: bool) -> None:
    assert grade("exact", output, expected, "none") == Grade(passed, 1.0 if passed else 0.0)


@pytest.mark.parametrize(
    ("output", "expected", "passed"),
    [
        ("The capital is  PARIS.", "capital is paris", True),
        ("concatenate", "cat", True),  # a substring, not a word
        ("Paris", "Paris, France", False),
        ("anything", "", False),  # an empty key is in every text: it proves nothing
        ("anything", " \t ", False),
    ],
)
def test_contains(output: str, expected: str, passed: bool) -> None:
    assert passes("contains", output, expected) is passed


def test_words_seven_of_ten_passes_at_exactly_seventy_percent() -> None:
    assert policy.WORDS_PASS_SHARE == 0.7
    result = grade("words", "Alpha, beta; gamma delta epsilon zeta eta.", TEN, "none")
    assert result == Grade(
        passed=True,
        score=0.7,
        found=("alpha", "beta", "delta", "epsilon", "eta", "gamma", "zeta"),
        missed=("iota", "kappa", "theta"),
    )


def test_words_six_of_ten_fails_and_scores_the_share() -> None:
    result = grade("words", "alpha beta gamma delta epsilon zeta", TEN, "none")
    assert (result.passed, result.score) == (False, 0.6)
    assert result.missed == ("eta", "iota", "kappa", "theta")


def test_words_counts_each_word_once_and_ignores_case_and_order() -> None:
    result = grade("words", "RED red Red", "red red green", "none")
    assert result == Grade(False, 0.5, found=("red",), missed=("green",))


def test_words_with_no_word_in_the_key_fails() -> None:
    assert grade("words", "?!", "?!", "none") == Grade(False, 0.0)


def test_words_normalises_unicode() -> None:
    assert grade("words", "STRASSE １２ ﬁle", "Straße 12 file", "none").score == 1.0


@pytest.mark.parametrize(
    ("output", "expected", "result"),
    [
        # exact: 1, and the words are still the evidence
        ("Red Green", "red green", Grade(True, 1.0, ("green", "red"), ())),
        # contains without a single whole word: 1
        ("concatenate", "cat", Grade(True, 1.0, (), ("cat",))),
        # words only, 3 of 4: the share
        (
            "blue, green and red",
            "red green blue black",
            Grade(True, 0.75, ("blue", "green", "red"), ("black",)),
        ),
        # nothing passes: fails with the words share
        (
            "red and blue",
            "red green blue black",
            Grade(False, 0.5, ("blue", "red"), ("black", "green")),
        ),
    ],
)
def test_fuzzy(output: str, expected: str, result: Grade) -> None:
    assert grade("fuzzy", output, expected, "none") == result


@pytest.mark.parametrize(
    ("output", "expected", "passed"),
    [
        ('{"a": 1, "b": [1, 2]}', {"b": [1, 2.0], "a": 1.0}, True),  # key order, 1 == 1.0
        ('  {"a":1}\n', '{"a": 1}', True),  # output stripped; a string key is parsed
        ("[2, 1]", [1, 2], False),  # arrays in order
        ('{"a": 1}', {"a": 1, "b": 2}, False),
        ("[1, 2, 3]", [1, 2], False),
        ("true", 1, False),  # true is not 1, whatever Python says
        ("1", True, False),
        ('"Paris"', '"paris"', False),  # strings exactly
        ('"Paris"', '"Paris"', True),
        ("null", None, True),  # null is an answer key like any value
        ("0", None, False),
        ('{"a": 1}', [1], False),  # an object is not an array
        ("[1]", "[[1]]", False),
        ('Sure! {"a": 1}', {"a": 1}, False),  # not JSON
        ("NaN", "NaN", False),  # neither is NaN
        ("1", "not json", False),  # a key that does not parse fails every answer
        ("[" * 100_000 + "]" * 100_000, [], False),  # too deep to parse
    ],
)
def test_json(output: str, expected: object, passed: bool) -> None:
    assert grade("json", output, expected, "none") == Grade(passed, 1.0 if passed else 0.0)


def test_json_equal_compares_nesting_deeper_than_the_recursion_limit() -> None:
    left: list[object] = []
    right: list[object] = []
    a, b = left, right
    for _ in range(5_000):
        a.append([])
        b.append([])
        a, b = a[0], b[0]  # type: ignore[assignment]
    assert json_equal(left, right)
    a.append(1)
    assert not json_equal(left, right)


@pytest.mark.parametrize(
    ("output", "pattern", "passed"),
    [
        ("call 555-1234 today", r"\d{3}-\d{4}", True),
        ("Paris", "paris", False),  # no flags: case matters
        ("line one\nline two", "^line two", False),  # no MULTILINE either
        ("the answer: 42", 42, True),  # a number is matched as its text
        ("(", "(", False),  # an invalid pattern fails rather than raising
    ],
)
def test_regex(output: str, pattern: object, passed: bool) -> None:
    assert passes("regex", output, pattern) is passed


def test_completion_passes_on_any_answer_without_a_key() -> None:
    assert grade("completion", "", None, "none", has_expected=False) == Grade(True, 1.0)
    assert grade("completion", None, None, "none", has_expected=False) == Grade(True, 1.0)


@pytest.mark.parametrize("grader", GRADERS)
@pytest.mark.parametrize("error_class", ["timeout", "connection_error", "http_error", "exception"])
def test_every_grader_fails_a_dispatch_that_did_not_end_well(grader: str, error_class: str) -> None:
    # The output would pass: the error class alone fails it, with no evidence.
    assert grade(grader, '"x"', '"x"', error_class) == Grade(False, 0.0)


@pytest.mark.parametrize("grader", [g for g in GRADERS if g != "completion"])
def test_a_grader_with_no_key_fails(grader: str) -> None:
    assert grade(grader, "null", None, "none", has_expected=False) == Grade(False, 0.0)


def test_no_output_grades_as_empty_text() -> None:
    assert grade("contains", None, "x", "none") == Grade(False, 0.0)
    assert grade("exact", None, "", "none") == Grade(True, 1.0)


def test_an_unknown_grader_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown grader 'exactly'"):
        grade("exactly", "x", "x", "none")


def test_the_package_exports_the_graders() -> None:
    assert scoring.grade is grade and scoring.GRADERS == GRADERS


# -- properties ------------------------------------------------------------------------

REWRITES: list[Callable[[str], str]] = [
    str.upper,
    str.lower,
    str.casefold,
    lambda s: f" \t{s}\n ",
    lambda s: re.sub(r"\s", "   ", s),
    lambda s: unicodedata.normalize("NFKD", s),
]
TEXT_GRADERS = ("exact", "contains", "words", "fuzzy")


@given(st.text(), st.sampled_from(REWRITES))
def test_a_passing_exact_answer_passes_every_text_grader(
    expected: str, rewrite: Callable[[str], str]
) -> None:
    output = rewrite(expected)
    assume(words(expected) and passes("exact", output, expected))
    for grader in TEXT_GRADERS:
        assert grade(grader, output, expected, "none") == grade(grader, expected, expected, "none")
        assert grade(grader, output, expected, "none").score == 1.0


@given(st.text(), st.text(), st.text(), st.booleans())
def test_adding_words_never_makes_contains_or_words_fail(
    output: str, expected: str, extra: str, before: bool
) -> None:
    longer = f"{extra} {output}" if before else f"{output} {extra}"
    if passes("contains", output, expected):
        assert passes("contains", longer, expected)
    shorter, more = (
        grade("words", output, expected, "none"),
        grade("words", longer, expected, "none"),
    )
    assert more.score >= shorter.score
    assert more.passed or not shorter.passed


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def reordered(value: object, rng: random.Random) -> object:
    """The same JSON value with every object's keys shuffled and integral ints as floats."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: reordered(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [reordered(item, rng) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return float(value)
    return value


@given(JSON_VALUES, st.randoms(use_true_random=False))
def test_json_is_order_free_for_objects_and_compares_numbers_by_value(
    value: object, rng: random.Random
) -> None:
    assert passes("json", json.dumps(reordered(value, rng)), json.dumps(value))
    if not isinstance(value, str):  # a string key is JSON text to parse, so it is given as such
        assert passes("json", json.dumps(value), reordered(value, rng))


@st.composite
def json_pairs(draw: st.DrawFn) -> tuple[object, object]:
    """Two JSON values: unrelated, or the same one rewritten (equal, so the claim is tested)."""
    left = draw(JSON_VALUES)
    related = draw(st.booleans())
    right = (
        reordered(left, draw(st.randoms(use_true_random=False))) if related else draw(JSON_VALUES)
    )
    return left, right


@given(json_pairs())
def test_json_equality_is_symmetric(pair: tuple[object, object]) -> None:
    left, right = pair
    there = passes("json", json.dumps(left), json.dumps(right))
    assert there == passes("json", json.dumps(right), json.dumps(left))
    assert there == json_equal(left, right)
