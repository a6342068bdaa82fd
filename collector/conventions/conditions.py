"""Conditions (CONVENTIONS.md section 2), compiled once into tests.

A condition is a mapping whose tests must all hold. Each compiles to a
closure over a `SpanView`; regexes and globs are compiled at load. Besides
the test, a condition says which attribute keys it reads (they become the
keys `proto` lifts at decode) and `needs`: keys of which at least one must be
present for it to hold, or None. Recognition looks at a rule only when a key
it needs is on the span (or it needs none), so the many rules of many
conventions cost a span only the few that could match it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from collector.conventions import shapes
from collector.conventions.problems import Report
from collector.conventions.span import KINDS, STATUSES, SpanView
from collector.conventions.values import Canonical, as_text, canon
from collector.conventions.yaml_tree import Located, plain

Test = Callable[[SpanView], bool]

FIELDS = (
    *("attr", "resource", "equals", "in", "matches"),
    *("scope", "name", "kind", "status", "any", "all", "not"),
)
_VALUE_TESTS = ("equals", "in", "matches")


@dataclass(frozen=True, slots=True)
class Condition:
    """A compiled condition, and what it reads: recognition remembers its
    decision for spans that agree on all of that (collector.conventions.engine)."""

    test: Test
    keys: frozenset[str]  # span attribute keys it reads
    needs: frozenset[str] | None  # it can hold only if one of these keys is present
    valued: frozenset[str] = frozenset()  # the keys whose value it tests (else presence)
    resource_keys: frozenset[str] = frozenset()  # resource attributes it reads
    names: tuple[re.Pattern[str], ...] = ()  # span-name regexes it searches


# A test on the span itself: no attribute read, none needed.
_NONE: dict[str, Any] = {"keys": frozenset(), "needs": None}


def _reads(parts: list[Condition]) -> dict[str, Any]:
    """What several conditions read together."""
    names: dict[str, re.Pattern[str]] = {}
    for part in parts:
        names.update((p.pattern, p) for p in part.names)
    return {
        "keys": frozenset().union(*(p.keys for p in parts)),
        "valued": frozenset().union(*(p.valued for p in parts)),
        "resource_keys": frozenset().union(*(p.resource_keys for p in parts)),
        "names": tuple(names.values()),
    }


def compile_condition(node: Located, path: str, report: Report) -> Condition | None:
    """The condition at `path`, or None (each problem reported)."""
    entries = shapes.fields(node, path, FIELDS, report, "a condition")
    if entries is None:
        return None
    if not entries:
        if isinstance(node.value, dict) and not node.value:
            report.add(node.line, path, "a condition needs at least one test")
        return None
    parts: list[Condition] = []
    ok = True
    if "attr" in entries and "resource" in entries:
        report.add(
            shapes.key_line(node, "resource"),
            shapes.child(path, "resource"),
            "a condition has attr or resource, not both (combine them with all)",
        )
        ok = False
    elif "attr" in entries or "resource" in entries:
        part = _value_test(node, entries, path, report)
        ok = part is not None and ok
        parts += [part] if part is not None else []
    else:
        for key in _VALUE_TESTS:
            if key in entries:
                report.add(
                    shapes.key_line(node, key), shapes.child(path, key), "needs attr or resource"
                )
                ok = False
    for key, build in _SPAN_TESTS.items():
        if key in entries:
            made = build(entries[key], shapes.child(path, key), report)
            ok = made is not None and ok
            parts += [made] if made is not None else []
    return all_of(parts) if ok and parts else None


def all_of(parts: list[Condition]) -> Condition:
    if len(parts) == 1:
        return parts[0]
    tests = tuple(part.test for part in parts)

    def every(span: SpanView) -> bool:
        for test in tests:
            if not test(span):
                return False
        return True

    needed = [p.needs for p in parts if p.needs is not None]
    return Condition(every, needs=min(needed, key=len, default=None), **_reads(parts))


def any_of(parts: list[Condition]) -> Condition:
    tests = tuple(part.test for part in parts)

    def some(span: SpanView) -> bool:
        for test in tests:
            if test(span):
                return True
        return False

    needs: frozenset[str] | None = None
    if all(p.needs is not None for p in parts):
        needs = frozenset().union(*(p.needs or () for p in parts))
    return Condition(some, needs=needs, **_reads(parts))


def _value_test(
    node: Located, entries: Mapping[str, Located], path: str, report: Report
) -> Condition | None:
    """`attr: KEY` or `resource: KEY`, with `equals`, `in`, `matches` if given."""
    on_span = "attr" in entries
    field = "attr" if on_span else "resource"
    key = shapes.text(entries[field], shapes.child(path, field), report, "an attribute key")
    checks: list[Callable[[Any], bool]] = []
    ok = key is not None
    if "equals" in entries:
        target = _scalar(entries["equals"], shapes.child(path, "equals"), report)
        ok = target is not None and ok
        checks.append(lambda value: canon(value) == target)
    if "in" in entries:
        targets = _scalars(entries["in"], shapes.child(path, "in"), report)
        ok = targets is not None and ok
        allowed = targets or frozenset()
        checks.append(lambda value: canon(value) in allowed)
    if "matches" in entries:
        pattern = shapes.regex(entries["matches"], shapes.child(path, "matches"), report)
        ok = pattern is not None and ok
        search = pattern.search if pattern is not None else None
        checks.append(lambda value: search is not None and search(as_text(value)) is not None)
    if not ok or key is None:
        return None
    if not on_span:
        test = _resource_test(key, tuple(checks))
        return Condition(test, frozenset(), None, resource_keys=frozenset({key}))
    valued = frozenset({key}) if checks else frozenset()
    return Condition(_attr_test(key, tuple(checks)), frozenset({key}), frozenset({key}), valued)


def _attr_test(key: str, checks: tuple[Callable[[Any], bool], ...]) -> Test:
    if not checks:
        return lambda span: key in span.attrs
    if len(checks) == 1:
        check = checks[0]

        def one(span: SpanView) -> bool:
            value = span.attrs.get(key)
            return value is not None and check(value)

        return one

    def several(span: SpanView) -> bool:
        value = span.attrs.get(key)
        return value is not None and all(check(value) for check in checks)

    return several


def _resource_test(key: str, checks: tuple[Callable[[Any], bool], ...]) -> Test:
    def test(span: SpanView) -> bool:
        value = span.resource.get(key)
        if value is None:
            return False
        return all(check(value) for check in checks)

    return test


def _scalar(node: Located, path: str, report: Report) -> Canonical | None:
    value = node.value
    if isinstance(value, str | bool) or (
        isinstance(value, int | float) and value == value and abs(value) != float("inf")
    ):
        return canon(value)
    report.add(node.line, path, "must be text, a finite number or a boolean")
    return None


def _scalars(node: Located, path: str, report: Report) -> frozenset[Canonical] | None:
    listed = shapes.items(node, path, report, "values")
    if listed is None:
        return None
    found = [_scalar(item, shapes.child(path, i), report) for i, item in enumerate(listed)]
    if any(value is None for value in found):
        return None
    return frozenset(value for value in found if value is not None)


def _scope(node: Located, path: str, report: Report) -> Condition | None:
    """`scope: GLOB` or a list: fnmatch, case-sensitive."""
    listed = node.value if isinstance(node.value, list) else [node]
    if not listed:
        report.add(node.line, path, "must be a glob or a non-empty list of globs")
        return None
    globs = [item.value for item in listed]
    if not all(isinstance(glob, str) for glob in globs):  # '' is a scope with no name
        report.add(node.line, path, "must be a glob or a non-empty list of globs")
        return None
    matchers = tuple(re.compile(fnmatch.translate(glob)).match for glob in globs)
    return Condition(lambda span: any(match(span.scope) for match in matchers), **_NONE)


def _name(node: Located, path: str, report: Report) -> Condition | None:
    pattern = shapes.regex(node, path, report)
    if pattern is None:
        return None
    search = pattern.search
    return Condition(lambda span: search(span.name) is not None, names=(pattern,), **_NONE)


def _kind(node: Located, path: str, report: Report) -> Condition | None:
    listed = node.value if isinstance(node.value, list) else [node]
    kinds = {_named(item, path, KINDS, report) for item in listed}
    if not listed or None in kinds:
        if not listed:
            report.add(node.line, path, f"must be one of {', '.join(KINDS)}, or a list of them")
        return None
    allowed = frozenset(kind for kind in kinds if kind is not None)
    return Condition(lambda span: span.kind in allowed, **_NONE)


def _status(node: Located, path: str, report: Report) -> Condition | None:
    code = _named(node, path, STATUSES, report)
    if code is None:
        return None
    return Condition(lambda span: span.status == code, **_NONE)


def _named(node: Located, path: str, names: dict[str, int], report: Report) -> int | None:
    value = node.value
    if isinstance(value, str) and value.strip().upper() in names:
        return names[value.strip().upper()]
    report.add(node.line, path, f"must be one of {', '.join(names)}, not {plain(node)!r}")
    return None


def _any(node: Located, path: str, report: Report) -> Condition | None:
    parts = _conditions(node, path, report)
    return any_of(parts) if parts else None


def _all(node: Located, path: str, report: Report) -> Condition | None:
    parts = _conditions(node, path, report)
    return all_of(parts) if parts else None


def _not(node: Located, path: str, report: Report) -> Condition | None:
    inner = compile_condition(node, path, report)
    if inner is None:
        return None
    test = inner.test
    return Condition(lambda span: not test(span), needs=None, **_reads([inner]))


def _conditions(node: Located, path: str, report: Report) -> list[Condition] | None:
    listed = shapes.items(node, path, report, "conditions")
    if listed is None:
        return None
    found = [
        compile_condition(item, shapes.child(path, i), report) for i, item in enumerate(listed)
    ]
    if any(part is None for part in found):
        return None
    return [part for part in found if part is not None]


# The tests on the span itself, in the order they are tried: cheap ones first.
_SPAN_TESTS: dict[str, Callable[[Located, str, Report], Condition | None]] = {
    "kind": _kind,
    "status": _status,
    "scope": _scope,
    "name": _name,
    "any": _any,
    "all": _all,
    "not": _not,
}
