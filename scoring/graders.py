"""The graders of a screening (SCREEN.md section 2): did an answer match its key?

Pure functions of the output text, the expected output and the dispatch's
error class, so the screener, the tests and any later re-grading agree on
every grade. Imports nothing of ours but the policy and no I/O library
(import-linter checks it). The `found` / `missed` words of a grade are the
evidence the dashboard marks in the output.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from scoring import policy

GRADERS: Final[tuple[str, ...]] = (
    "exact",
    "contains",
    "words",
    "fuzzy",
    "json",
    "regex",
    "completion",
)

_WHITESPACE: Final = re.compile(r"\s+")
_WORD: Final = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Grade:
    """One answer's grade; `found` / `missed` are sorted words of the key (words, fuzzy)."""

    passed: bool
    score: float
    found: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()


_FAILED: Final = Grade(passed=False, score=0.0)


def norm(text: str) -> str:
    """NFKC, casefold, strip, one space per whitespace run: what "the same text" means."""
    folded = unicodedata.normalize("NFKC", text).casefold().strip()
    return _WHITESPACE.sub(" ", folded)


def words(text: str) -> set[str]:
    """The normalised text's runs of letters and digits (an underscore separates words)."""
    return set(_WORD.findall(norm(text)))


def expected_text(value: object) -> str:
    """The text a text grader compares: a string as is, any other JSON value compactly."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


Search = Callable[[str, str], bool]  # (pattern, text) -> does it match somewhere?


def python_search(pattern: str, text: str) -> bool:
    """SCREEN.md section 2's `regex`: `re.search`, no flags. A pattern that does not
    compile does not match (suites compile their patterns before screening)."""
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def grade(
    grader: str,
    output: str | None,
    expected: object,
    error_class: str,
    *,
    has_expected: bool = True,
    search: Search = python_search,
) -> Grade:
    """Grade one dispatch; a dispatch that did not end with error class `none` fails, score 0.

    `output` None (no answer) grades as empty text. A grader other than
    `completion` without an answer key fails: suites reject that case, so
    it only reaches here from a caller that skipped the suite checks.
    `search` does the `regex` grader's search: the screener passes one that
    runs Python's `re` bounded in time (collector/screening/regex_search.py);
    whatever it raises, this raises.
    Raises ValueError for a grader name not in GRADERS (a programming error).
    """
    if grader not in GRADERS:
        raise ValueError(f"unknown grader {grader!r}; graders: {', '.join(GRADERS)}")
    if error_class != "none":
        return _FAILED
    if grader == "completion":
        return Grade(passed=True, score=1.0)
    if not has_expected:
        return _FAILED
    text = output if output is not None else ""
    if grader == "json":
        return _pass_or_fail(_json_matches(text, expected))
    if grader == "regex":
        return _pass_or_fail(search(expected_text(expected), text))
    return _TEXT_GRADERS[grader](text, expected_text(expected))


def _pass_or_fail(passed: bool) -> Grade:
    return Grade(passed=passed, score=1.0 if passed else 0.0)


def _exact(output: str, expected: str) -> Grade:
    return _pass_or_fail(norm(output) == norm(expected))


def _contains(output: str, expected: str) -> Grade:
    key = norm(expected)
    return _pass_or_fail(bool(key) and key in norm(output))


def _words(output: str, expected: str) -> Grade:
    key = words(expected)
    if not key:
        return _FAILED
    seen = words(output)
    found = tuple(sorted(key & seen))
    missed = tuple(sorted(key - seen))
    share = len(found) / len(key)
    return Grade(share >= policy.WORDS_PASS_SHARE, share, found, missed)


def _fuzzy(output: str, expected: str) -> Grade:
    by_words = _words(output, expected)
    if _exact(output, expected).passed or _contains(output, expected).passed:
        return Grade(True, 1.0, by_words.found, by_words.missed)
    return by_words


_TEXT_GRADERS: Final[dict[str, Callable[[str, str], Grade]]] = {
    "exact": _exact,
    "contains": _contains,
    "words": _words,
    "fuzzy": _fuzzy,
}


def parse_json(text: str) -> object:
    """Strict JSON: NaN and Infinity are not JSON, so they do not parse.

    Raises ValueError (json.JSONDecodeError is one) or RecursionError.
    """
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json_matches(output: str, expected: object) -> bool:
    try:
        answer = parse_json(output.strip())
        key = parse_json(expected) if isinstance(expected, str) else expected
    except (ValueError, RecursionError):
        return False
    return json_equal(answer, key)


def json_equal(left: object, right: object) -> bool:
    """JSON values equal: objects in any key order, arrays in order, numbers by value.

    A boolean is not a number here (`true` is not `1`), although Python says
    `True == 1`. Iterative, so an answer nested deeper than Python's
    recursion limit is compared rather than crashing the grader.
    """
    pending: list[tuple[object, object]] = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif _kind(a) != _kind(b) or a != b:
            return False
    return True


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__
