"""CONVENTIONS.md sections 1 and 4: a convention file's schema, and every
load error named `file:line: field: message`."""

from __future__ import annotations

import textwrap

import pytest

from collector.conventions import ConventionError
from tests.collector.conventions_kit import convention_set


def problems(*texts: str) -> list[str]:
    with pytest.raises(ConventionError) as caught:
        convention_set(*texts)
    return [str(p) for p in caught.value.problems]


HEAD = "convention: acme\nversion: 1\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("convention: acme\nversion: [1\n", "test-0.yaml:3: yaml: "),  # bad YAML
        ("convention: acme\n  version: 1\n", "test-0.yaml:2: yaml: "),
        ("convention: a\nconvention: b\nversion: 1\n", "test-0.yaml:2: convention: given twice"),
        ("convention: a\nversion: !!int x\n", "test-0.yaml:2: version: 'x' is not a valid !!int"),
        ("- a\n- b\n", "test-0.yaml:1: file: a convention file must be a mapping"),
        ("", "test-0.yaml:1: file: a convention file must be a mapping"),
        ("just text\n", "test-0.yaml:1: file: a convention file must be a mapping"),
    ],
)
def test_text_that_is_no_yaml_mapping_is_named_by_its_line(text: str, expected: str) -> None:
    found = problems(text)
    assert len(found) == 1 and found[0].startswith(expected), found


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("colour: red\n", "test-0.yaml:3: colour: unknown field of a convention file"),
        (
            "tool:\n  - when: {attr: k}\n    colour: red\n",
            "test-0.yaml:5: tool[0].colour: unknown field of a tool rule",
        ),
        (
            "agent:\n  - when: {attr: k}\n    model: [{attr: m}]\n",
            "test-0.yaml:5: agent[0].model: unknown field of a agent rule",
        ),
        (
            "llm:\n  - when: {attr: k}\n    tool_name: [{attr: m}]\n",
            "test-0.yaml:5: llm[0].tool_name: unknown field of a llm rule",
        ),
        (
            "tool:\n  - when:\n      attr: k\n      colour: red\n",
            "test-0.yaml:6: tool[0].when.colour: unknown field of a condition",
        ),
        (
            "applies_to:\n  any:\n    - {scope: x}\n    - {not: {colour: red}}\n",
            "test-0.yaml:6: applies_to.any[1].not.colour: unknown field of a condition",
        ),
        (
            "tool:\n  - when: {attr: k}\n    tool_name:\n      - {attr: a, colour: red}\n",
            "test-0.yaml:6: tool[0].tool_name[0].colour: unknown field of a source",
        ),
        (
            "usage:\n  input_tokens: [{attr: a}]\n  total_tokens: [{attr: b}]\n",
            "test-0.yaml:5: usage.total_tokens: unknown field of usage",
        ),
    ],
)
def test_an_unknown_field_at_any_level_is_an_error(body: str, expected: str) -> None:
    assert problems(HEAD + body) == [expected]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("tool:\n  - when: {attr: k, matches: '(unclosed'}\n", "4: tool[0].when.matches"),
        ("tool:\n  - when: {name: '[z-a]'}\n", "4: tool[0].when.name"),
        (
            "tool:\n  - when: {attr: k}\n    tool_name: [{name: '*x'}]\n",
            "5: tool[0].tool_name[0].name",
        ),
    ],
)
def test_a_bad_regex_is_an_error_when_the_file_loads(body: str, where: str) -> None:
    (found,) = problems(HEAD + body)
    assert found.startswith(f"test-0.yaml:{where}: invalid regular expression"), found


@pytest.mark.parametrize(
    ("version", "line"),
    [("0", 2), ("-1", 2), ("'1'", 2), ("1.5", 2), ("true", 2), ("[1]", 2)],
)
def test_a_version_must_be_a_whole_number_from_one(version: str, line: int) -> None:
    (found,) = problems(f"convention: acme\nversion: {version}\n")
    assert found.startswith(f"test-0.yaml:{line}: version: must be a whole number from 1")


def test_name_and_version_are_required() -> None:
    assert problems("description: nothing else\n") == [
        "test-0.yaml:1: convention: required: the convention's name",
        "test-0.yaml:1: version: required: a whole number from 1, bumped on change",
    ]


@pytest.mark.parametrize("name", ["Acme", "-acme", "acme tools", "a" * 65, "''", "12"])
def test_a_name_must_be_a_short_lowercase_word(name: str) -> None:
    (found,) = problems(f"convention: {name}\nversion: 1\n")
    assert found.startswith("test-0.yaml:1: convention: ")


def test_two_files_may_not_share_a_name() -> None:
    assert problems(HEAD, "description: again\n" + HEAD) == [
        "test-1.yaml:2: convention: the name 'acme' is taken by test-0.yaml"
    ]


@pytest.mark.parametrize(
    ("when", "field", "message"),
    [
        ("{attr: a, resource: b}", "tool[0].when.resource", "attr or resource, not both"),
        ("{equals: x}", "tool[0].when.equals", "needs attr or resource"),
        ("{matches: x, name: y}", "tool[0].when.matches", "needs attr or resource"),
        ("{}", "tool[0].when", "a condition needs at least one test"),
        ("[{attr: a}]", "tool[0].when", "a condition must be a mapping"),
        ("{any: {attr: a}}", "tool[0].when.any", "must be a non-empty list of conditions"),
        ("{all: []}", "tool[0].when.all", "must be a non-empty list of conditions"),
        ("{attr: a, in: []}", "tool[0].when.in", "must be a non-empty list of values"),
        ("{attr: a, in: x}", "tool[0].when.in", "must be a non-empty list of values"),
        ("{attr: a, equals: [x]}", "tool[0].when.equals", "text, a finite number or a boolean"),
        ("{attr: a, equals: null}", "tool[0].when.equals", "text, a finite number or a boolean"),
        ("{attr: a, equals: .nan}", "tool[0].when.equals", "text, a finite number or a boolean"),
        ("{attr: ''}", "tool[0].when.attr", "must be an attribute key"),
        ("{attr: [a]}", "tool[0].when.attr", "must be an attribute key"),
        ("{kind: SIDEWAYS}", "tool[0].when.kind", "must be one of INTERNAL, SERVER"),
        ("{status: FINE}", "tool[0].when.status", "must be one of UNSET, OK, ERROR"),
        ("{scope: []}", "tool[0].when.scope", "must be a glob or a non-empty list"),
    ],
)
def test_a_condition_of_the_wrong_shape_is_an_error(when: str, field: str, message: str) -> None:
    (found,) = problems(HEAD + f"tool:\n  - when: {when}\n")
    assert found.startswith(f"test-0.yaml:4: {field}: ") and message in found, found


@pytest.mark.parametrize(
    ("source", "field", "message"),
    [
        ("[{attr: a, name: '(x)'}]", "tool_name[0]", "one of attr, name or resource"),
        ("[{json: a.b}]", "tool_name[0]", "one of attr, name or resource"),
        ("[{resource: a, json: b}]", "tool_name[0].json", "needs attr"),
        ("[{attr: a, json: ''}]", "tool_name[0].json", "a dotted path"),
        ("[{attr: a, json: 'a..b'}]", "tool_name[0].json", "a dotted path"),
        ("[{name: 'no group'}]", "tool_name[0].name", "needs a group"),
        ("[]", "tool_name", "non-empty list of places"),
    ],
)
def test_a_source_of_the_wrong_shape_is_an_error(source: str, field: str, message: str) -> None:
    (found,) = problems(HEAD + f"tool:\n  - when: {{attr: k}}\n    tool_name: {source}\n")
    assert f": tool[0].{field}: " in found and message in found, found


def test_a_rule_needs_a_condition() -> None:
    assert problems(HEAD + "tool:\n  - tool_name: [{attr: a}]\n") == [
        "test-0.yaml:4: tool[0].when: required: the rule's condition"
    ]


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    text = textwrap.dedent(
        """\
        convention: acme
        version: 0
        colour: red
        tool:
          - when: {attr: a, matches: '('}
        llm:
          - when: {name: ok}
            model: [{name: 'no group'}]
        """
    )
    assert [p.split(": ")[0:2] for p in problems(text)] == [
        ["test-0.yaml:3", "colour"],
        ["test-0.yaml:2", "version"],
        ["test-0.yaml:5", "tool[0].when.matches"],
        ["test-0.yaml:8", "llm[0].model[0].name"],
    ]


def test_a_file_that_loads_keeps_its_fields() -> None:
    conventions = convention_set(
        HEAD + "description: the acme tracer\napplies_to: {scope: 'acme.*'}\n"
        "tool:\n  - when: {attr: acme.kind, equals: TOOL}\n"
    )
    (acme,) = conventions.conventions
    assert (acme.name, acme.version, acme.description) == ("acme", 1, "the acme tracer")
    assert acme.content == {
        "convention": "acme",
        "version": 1,
        "description": "the acme tracer",
        "applies_to": {"scope": "acme.*"},
        "tool": [{"when": {"attr": "acme.kind", "equals": "TOOL"}}],
    }
    assert acme.keys == {"acme.kind"}


def test_a_description_may_be_empty_but_must_be_text() -> None:
    (acme,) = convention_set(HEAD + "description: ''\n").conventions
    assert acme.description == ""
    assert problems(HEAD + "description: [a]\n") == [
        "test-0.yaml:3: description: must be text, not ['a']"
    ]
