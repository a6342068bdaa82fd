"""CONVENTIONS.md section 4: which convention decides, what is unrecognised,
and the digest every run records."""

from __future__ import annotations

import re

import pytest

from collector.conventions import BUILT_IN, ConventionError, builtin_set, builtin_sources
from tests.collector.conventions_kit import convention_set, recognise

ACME = """\
convention: acme
version: 1
applies_to: {scope: 'acme.*'}
agent:
  - when: {attr: k, equals: x}
llm:
  - when: {attr: k, equals: x}
tool:
  - when: {attr: other}
  - when: {attr: k, equals: x}
not_a_step:
  - when: {name: '^final'}
  - when: {attr: k, equals: x}
"""


def test_rules_are_tried_not_a_step_tool_llm_agent_and_the_first_match_decides() -> None:
    conventions = convention_set(ACME)
    found = recognise(conventions, attrs={"k": "x"}, scope="acme.tracer")
    assert (found.role, found.counted, found.convention) == ("tool", False, "acme")
    assert (found.rule_role, found.rule_index, found.label) == (
        "not_a_step",
        1,
        "acme:not_a_step[1]",
    )
    tool = recognise(conventions, attrs={"other": 1, "k": "y"}, scope="acme.tracer")
    assert (tool.role, tool.counted, tool.label) == ("tool", True, "acme:tool[0]")


def test_a_convention_is_tried_only_where_its_applies_to_holds() -> None:
    conventions = convention_set(ACME)
    assert recognise(conventions, attrs={"k": "x"}, scope="other").role == "other"


def test_users_files_come_first_in_the_order_given_then_the_built_ins() -> None:
    mine = "convention: mine\nversion: 1\nagent:\n  - when: {attr: gen_ai.operation.name}\n"
    theirs = "convention: theirs\nversion: 1\nllm:\n  - when: {attr: gen_ai.operation.name}\n"
    conventions = convention_set(mine, theirs, builtins=True)
    names = [c.name for c in conventions.conventions]
    assert names[:3] == ["mine", "theirs", "pydantic-ai"]
    found = recognise(conventions, attrs={"gen_ai.operation.name": "execute_tool"})
    assert (found.role, found.label) == ("agent", "mine:agent[0]")
    builtin = recognise(builtin_set(), attrs={"gen_ai.operation.name": "execute_tool"})
    assert (builtin.role, builtin.label) == ("tool", "genai:tool[0]")


def test_a_span_no_rule_matches_is_unrecognised_unless_a_family_knows_it() -> None:
    conventions = convention_set(
        ACME,
        "convention: nameless\nversion: 1\nagent:\n  - when: {attr: never}\n",
    )
    known = recognise(conventions, attrs={"k": "y"}, scope="acme.tracer")
    assert (known.role, known.known_by, known.label) == ("other", "acme", "acme:applies_to")
    # a convention without an explicit applies_to makes no span known
    stranger = recognise(conventions, attrs={"k": "y"}, scope="elsewhere")
    assert (stranger.role, stranger.known_by, stranger.label) == ("other", "", "unrecognised")


def test_an_other_span_reads_run_totals_where_its_family_says() -> None:
    family = ACME + "usage:\n  input_tokens: [{attr: totals, json: in}]\n"
    conventions = convention_set(family)
    found = recognise(conventions, attrs={"totals": '{"in": 40}'}, scope="acme.x")
    assert (found.role, found.input_tokens) == ("other", 40)
    plain = recognise(conventions, attrs={"gen_ai.usage.input_tokens": 7})
    assert (plain.role, plain.input_tokens) == ("other", 7)


def test_rules_that_need_no_attribute_are_still_tried_in_order() -> None:
    first = "convention: first\nversion: 1\ntool:\n  - when: {name: '^run'}\n"
    second = "convention: second\nversion: 1\nllm:\n  - when: {attr: k}\n"
    conventions = convention_set(second, first)
    assert recognise(conventions, "run", {"k": 1}).label == "second:llm[0]"
    assert recognise(convention_set(first, second), "run", {"k": 1}).label == "first:tool[0]"


def test_the_digest_is_the_same_for_the_same_content_and_changes_with_it() -> None:
    base = convention_set(ACME).digest
    assert re.fullmatch(r"[0-9a-f]{16}", base)
    assert convention_set(ACME).digest == base
    reformatted = ACME.replace("{attr: other}", "\n      attr: other") + "# a comment\n"
    assert convention_set(reformatted).digest == base  # the mapping as loaded, not the text
    assert convention_set(ACME.replace("version: 1", "version: 2")).digest != base
    assert convention_set(ACME.replace("'^final'", "'^last'")).digest != base
    other = "convention: other\nversion: 1\n"
    assert convention_set(ACME, other).digest != convention_set(other, ACME).digest


def test_the_digest_is_sha256_of_the_canonical_list() -> None:
    import hashlib

    import rfc8785

    conventions = convention_set("convention: a\nversion: 3\ndescription: d\n")
    listed = [
        {
            "convention": "a",
            "version": 3,
            "content": {"convention": "a", "version": 3, "description": "d"},
        }
    ]
    assert conventions.digest == hashlib.sha256(rfc8785.dumps(listed)).hexdigest()[:16]


def test_the_built_ins_load_in_the_order_of_their_file_names() -> None:
    sources = builtin_sources()
    files = [s.file for s in sources]
    assert files == sorted(files) and all(s.origin == BUILT_IN for s in sources)
    assert all(re.fullmatch(r"built-in/\d{3}-[a-z0-9.-]+\.yaml", f) for f in files)
    conventions = builtin_set().conventions
    for source, convention in zip(sources, conventions, strict=True):
        assert source.file.endswith(f"-{convention.name}.yaml")  # file named for it
        assert "checked on" in convention.description.lower() or "no recording" in (
            convention.description.lower()
        ), convention.name


def test_a_user_file_may_not_take_a_built_in_name() -> None:
    with pytest.raises(ConventionError) as caught:
        convention_set("convention: genai\nversion: 1\n", builtins=True)
    (found,) = caught.value.problems
    assert str(found) == (
        "built-in/200-genai.yaml:1: convention: the name 'genai' is taken by test-0.yaml"
    )


def test_a_remembered_decision_still_reads_each_spans_own_values() -> None:
    conventions = convention_set(
        "convention: m\nversion: 1\ntool:\n  - when: {attr: kind, equals: TOOL}\n"
        "    tool_name: [{name: '^Tool: (.+)'}]\n    call_id: [{attr: call}]\n"
    )
    first = recognise(conventions, "Tool: a", {"kind": "TOOL", "call": "1"})
    second = recognise(conventions, "Tool: b", {"kind": "TOOL", "call": "2"})
    assert (first.tool_name, first.call_id) == ("a", "1")
    assert (second.tool_name, second.call_id) == ("b", "2")


def test_remembered_decisions_tell_apart_what_the_conditions_tell_apart() -> None:
    conventions = convention_set(
        "convention: m\nversion: 1\nllm:\n  - when: {attr: k, equals: 1}\n"
        "agent:\n  - when: {attr: k, equals: true}\n  - when: {attr: k, matches: '^\\[1\\]$'}\n"
    )
    roles = [recognise(conventions, attrs={"k": v}).role for v in (1, True, 1, True, "1")]
    assert roles == ["llm", "agent", "llm", "agent", "llm"]  # True is no 1 here
    with_list = recognise(conventions, attrs={"k": [1]})  # unhashable: decided, not remembered
    assert with_list.label == "m:agent[1]"


def test_span_names_decide_through_their_regexes() -> None:
    conventions = convention_set("convention: n\nversion: 1\ntool:\n  - when: {name: '^run '}\n")
    names = ["run 1", "walk", "run 2", "walk 2", "run 3"]
    assert [recognise(conventions, n).role for n in names] == [
        "tool",
        "other",
        "tool",
        "other",
        "tool",
    ]
