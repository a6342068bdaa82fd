"""CONVENTIONS.md section 2: conditions, and the normalised value they compare."""

from __future__ import annotations

from typing import Any

import pytest

from tests.collector.conventions_kit import one_rule, recognise


def holds(when: str, attrs: dict[str, Any] | None = None, **span: Any) -> bool:
    return recognise(one_rule(when), attrs=attrs, **span).role == "tool"


@pytest.mark.parametrize(
    ("target", "value", "equal"),
    [
        ("TOOL", "TOOL", True),
        ("TOOL", "tool", True),  # strings compare case-insensitively
        ("TOOL", "  Tool \n", True),  # after stripping
        ("TOOL", '"TOOL"', True),  # a JSON string literal is unquoted once
        ("TOOL", '  "tool" ', True),
        ('"TOOL"', "TOOL", True),  # the condition's value is normalised alike
        ("TOOL", '"\\"TOOL\\""', False),  # once, not twice
        ("TOOLS", "TOOL", False),
        ("12", 12, True),  # a number compares by value, number or numeric string
        ("12", "12.0", True),
        ("12", '"12"', True),
        ("12", 12.5, False),
        ("0.5", ".5", True),
        ("1e3", 1000, True),
        ("true", True, True),  # booleans as true / false
        ("true", "True", True),
        ("false", False, True),
        ("1", True, False),  # a boolean is no number
        ("nan", "NaN", True),  # text that is no number compares as text
    ],
)
def test_equals_compares_normalised_values(target: str, value: Any, equal: bool) -> None:
    assert holds(f"{{attr: k, equals: '{target}'}}", {"k": value}) is equal


@pytest.mark.parametrize(("target", "value"), [("12", "12"), ("true", "true"), ("1.5", "1.5")])
def test_a_yaml_number_or_boolean_compares_by_value(target: str, value: str) -> None:
    assert holds(f"{{attr: k, equals: {target}}}", {"k": value})


def test_attr_alone_holds_when_the_attribute_is_there_whatever_its_value() -> None:
    assert holds("{attr: k}", {"k": ""})
    assert not holds("{attr: k}", {"other": 1})


def test_in_holds_for_any_listed_value() -> None:
    when = "{attr: k, in: [chat, 3, 'true']}"
    assert [holds(when, {"k": v}) for v in ("CHAT", '"3"', True, "chit")] == [
        True,
        True,
        True,
        False,
    ]


def test_matches_searches_the_unquoted_text_without_case_folding() -> None:
    assert holds("{attr: k, matches: '^Tool$'}", {"k": '"Tool"'})
    assert not holds("{attr: k, matches: '^tool$'}", {"k": '"Tool"'})
    assert holds("{attr: k, matches: 'ol'}", {"k": "Tool"})  # re.search: anywhere
    assert holds("{attr: k, matches: '^12$'}", {"k": 12})
    assert holds("{attr: k, matches: '^true$'}", {"k": True})


def test_a_value_test_fails_when_the_attribute_is_absent() -> None:
    assert not holds("{attr: k, equals: x}", {})
    assert not holds("{attr: k, matches: '.*'}", {})


def test_resource_tests_read_the_resource_attributes() -> None:
    when = "{resource: service.name, equals: Billing}"
    assert holds(when, {}, resource={"service.name": '"billing"'})
    assert not holds(when, {"service.name": "billing"})  # not the span's own
    assert holds("{resource: deployment}", {}, resource={"deployment": "x"})


def test_scope_matches_a_glob_case_sensitively() -> None:
    assert holds("{scope: 'acme.*'}", scope="acme.tracer")
    assert not holds("{scope: 'acme.*'}", scope="ACME.tracer")
    assert holds("{scope: ['x', 'a?me']}", scope="acme")
    assert not holds("{scope: 'acme'}", scope="acme.tracer")  # a glob matches the whole name


def test_name_searches_the_span_name() -> None:
    assert holds("{name: '^Tool: '}", name="Tool: search")
    assert holds("{name: 'search'}", name="Tool: search")
    assert not holds("{name: '^search'}", name="Tool: search")


def test_kind_and_status_compare_the_spans_enums() -> None:
    assert holds("{kind: CLIENT}", kind=3)
    assert holds("{kind: [SERVER, CONSUMER]}", kind=5)
    assert not holds("{kind: CLIENT}", kind=1)
    assert holds("{status: ERROR}", status=2)
    assert not holds("{status: OK}", status=0)
    assert holds("{status: UNSET}", status=0)


def test_the_tests_of_one_mapping_must_all_hold() -> None:
    when = "{attr: k, equals: x, name: '^a', kind: INTERNAL}"
    assert holds(when, {"k": "x"}, name="ab", kind=1)
    assert not holds(when, {"k": "x"}, name="ba", kind=1)
    assert not holds(when, {"k": "y"}, name="ab", kind=1)


def test_any_all_and_not_combine_conditions() -> None:
    assert holds("{any: [{attr: a}, {attr: b}]}", {"b": 1})
    assert not holds("{any: [{attr: a}, {attr: b}]}", {"c": 1})
    assert holds("{all: [{attr: a}, {attr: b}]}", {"a": 1, "b": 1})
    assert not holds("{all: [{attr: a}, {attr: b}]}", {"a": 1})
    assert holds("{not: {attr: a}}", {"b": 1})
    assert not holds("{not: {attr: a}}", {"a": 1})
    assert holds("{all: [{attr: a}, {not: {any: [{attr: b}, {name: x}]}}]}", {"a": 1}, name="y")


def test_an_empty_scope_glob_matches_spans_of_a_scope_with_no_name() -> None:
    assert holds("{scope: ''}", scope="")
    assert not holds("{scope: ''}", scope="acme")


def test_an_empty_regex_is_valid_and_matches_anything() -> None:
    assert holds("{name: ''}", name="any")
    assert holds("{attr: k, matches: ''}", {"k": 1})
