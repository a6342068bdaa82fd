"""Every suite error of SCREEN.md section 1, with the exact message a user reads.

The shape is "<file>[:<line>]: task <n> (id '<id>'): field '<field>': <what>",
parts left out when unknown; tasks are counted from 1 in the message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.screening.suite import SuiteError, load_suite

SUITE_FIELDS = "name, tasks, rounds, timeout_s, max_tokens, grader, send_expected"
TASK_FIELDS = "id, prompt, expected_output, grader, max_tokens, timeout_s, metadata"
GRADERS = "exact, contains, words, fuzzy, json, regex, completion"
ONE = "[{id: a, prompt: p}]"


def failure(path: Path) -> SuiteError:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value


# (YAML text, the message after the file name)
YAML_ERRORS = {
    # unknown fields
    "suite field": (
        f"round: 2\ntasks: {ONE}",
        f": field 'round': unknown field (fields: {SUITE_FIELDS})",
    ),
    "task field": (
        "tasks: [{id: a, prompt: p, expected: x}]",
        f": task 1 (id 'a'): field 'expected': unknown field (fields: {TASK_FIELDS})",
    ),
    # wrong types: bools are not numbers, numbers are not strings
    "rounds string": (
        f"rounds: '3'\ntasks: {ONE}",
        ": field 'rounds': expected an integer, got a string",
    ),
    "rounds bool": (
        f"rounds: true\ntasks: {ONE}",
        ": field 'rounds': expected an integer, got a boolean",
    ),
    "max_tokens float": (
        "tasks: [{id: a, prompt: p, max_tokens: 2.0}]",
        ": task 1 (id 'a'): field 'max_tokens': expected an integer, got a number",
    ),
    "send_expected 1": (
        f"send_expected: 1\ntasks: {ONE}",
        ": field 'send_expected': expected true or false, got an integer",
    ),
    "timeout bool": (
        f"timeout_s: true\ntasks: {ONE}",
        ": field 'timeout_s': expected a number of seconds, got a boolean",
    ),
    "id int": (
        "tasks: [{id: 5, prompt: p}]",
        ": task 1: field 'id': expected a string, got an integer (quote it)",
    ),
    "prompt null": (
        "tasks: [{id: a, prompt: null}]",
        ": task 1 (id 'a'): field 'prompt': expected a string, got null",
    ),
    "metadata list": (
        "tasks: [{id: a, prompt: p, metadata: [1]}]",
        ": task 1 (id 'a'): field 'metadata': expected an object, got a list",
    ),
    "tasks object": ("tasks: {}", ": field 'tasks': expected a list of tasks, got an object"),
    "task string": ("tasks: [hello]", ": task 1: expected a task object, got a string"),
    "name int": (f"name: 7\ntasks: {ONE}", ": field 'name': expected a string, got an integer"),
    "grader int": (
        f"grader: 5\ntasks: {ONE}",
        ": field 'grader': expected a string, got an integer",
    ),
    "unknown grader": (
        "tasks: [{id: a, prompt: p}, {id: refund, prompt: p, grader: exactly}]",
        f": task 2 (id 'refund'): field 'grader': unknown grader 'exactly' (graders: {GRADERS})",
    ),
    # the answer key
    "duplicate id": (
        "tasks: [{id: a, prompt: p}, {id: b, prompt: p}, {id: a, prompt: q}]",
        ": task 3 (id 'a'): field 'id': duplicate id, first used by task 1",
    ),
    "invalid regex": (
        "tasks: [{id: a, prompt: p, grader: regex, expected_output: '(ab'}]",
        ": task 1 (id 'a'): field 'expected_output':"
        " invalid regex: missing ), unterminated subpattern at position 0",
    ),
    "no key for exact": (
        "tasks: [{id: a, prompt: p, grader: exact}]",
        ": task 1 (id 'a'): field 'expected_output':"
        " required by grader 'exact' (only 'completion' grades without one)",
    ),
    "no key for the suite grader": (
        "grader: words\ntasks: [{id: a, prompt: p, expected_output: x}, {id: b, prompt: p}]",
        ": task 2 (id 'b'): field 'expected_output':"
        " required by grader 'words' (only 'completion' grades without one)",
    ),
    "json key not json": (
        "tasks: [{id: a, prompt: p, grader: json, expected_output: Paris}]",
        ": task 1 (id 'a'): field 'expected_output': grader 'json' parses a string as JSON,"
        " and this one does not parse (Expecting value: line 1 column 1 (char 0));"
        " to expect a JSON string, quote it",
    ),
    # ranges
    "name pattern": (
        f"name: my suite\ntasks: {ONE}",
        ": field 'name': must match [A-Za-z0-9._-]{1,64}, got 'my suite'",
    ),
    "name length": (
        f"name: {'n' * 65}\ntasks: {ONE}",
        f": field 'name': must match [A-Za-z0-9._-]{{1,64}}, got '{'n' * 65}'",
    ),
    "no tasks": ("tasks: []", ": field 'tasks': must hold 1..10,000 tasks, got 0"),
    "rounds 0": (f"rounds: 0\ntasks: {ONE}", ": field 'rounds': must be 1..100, got 0"),
    "rounds 101": (f"rounds: 101\ntasks: {ONE}", ": field 'rounds': must be 1..100, got 101"),
    "timeout 0": (
        f"timeout_s: 0\ntasks: {ONE}",
        ": field 'timeout_s': must be above 0 and at most 600, got 0",
    ),
    "timeout 600.5": (
        "tasks: [{id: a, prompt: p, timeout_s: 600.5}]",
        ": task 1 (id 'a'): field 'timeout_s': must be above 0 and at most 600, got 600.5",
    ),
    "timeout nan": (
        f"timeout_s: .nan\ntasks: {ONE}",
        ": field 'timeout_s': must be above 0 and at most 600, got nan",
    ),
    "max_tokens 0": (
        f"max_tokens: 0\ntasks: {ONE}",
        ": field 'max_tokens': must be at least 1, got 0",
    ),
    "empty id": (
        "tasks: [{id: '', prompt: p}]",
        ": task 1: field 'id': must be 1..256 characters, got 0",
    ),
    "long id": (
        f"tasks: [{{id: {'x' * 257}, prompt: p}}]",
        ": task 1: field 'id': must be 1..256 characters, got 257",
    ),
    "empty prompt": (
        "tasks: [{id: a, prompt: ''}]",
        ": task 1 (id 'a'): field 'prompt': must not be empty",
    ),
    # required fields
    "no tasks field": ("name: s", ": field 'tasks': required field is missing"),
    "no id": ("tasks: [{prompt: p}]", ": task 1: field 'id': required field is missing"),
    "no prompt": (
        "tasks: [{id: a}]",
        ": task 1 (id 'a'): field 'prompt': required field is missing",
    ),
    # values JSON cannot hold
    "date": (
        "tasks: [{id: a, prompt: p, expected_output: 2024-01-01}]",
        ": task 1 (id 'a'): field 'expected_output':"
        " holds a date, which is not a JSON value (quote it)",
    ),
    "nan": (
        "tasks: [{id: a, prompt: p, expected_output: [1, .nan]}]",
        ": task 1 (id 'a'): field 'expected_output': holds nan, which is not a JSON number",
    ),
    "int key": (
        "tasks: [{id: a, prompt: p, metadata: {1: one}}]",
        ": task 1 (id 'a'): field 'metadata': has an object key that is not a string: 1",
    ),
    "cycle": (
        "tasks: [{id: a, prompt: p, metadata: &m {again: *m}}]",
        ": task 1 (id 'a'): field 'metadata': holds itself (a YAML alias inside its own anchor)",
    ),
    # files that are not a suite
    "list": ("- id: a\n  prompt: p", ": expected a suite object, got a list"),
    "empty file": ("", ": expected a suite object, got null"),
    "bad yaml": (
        "tasks:\n  - {id: a, prompt: [p}\n",
        ":2: not valid YAML: while parsing a flow sequence, did not find expected ',' or ']'",
    ),
    "too deep": ("a: " + "[" * 900 + "]" * 900, ": not valid YAML: nested too deep"),
    "duplicate yaml key": (
        "tasks: [{id: a, prompt: p, id: b}]",
        ":1: not valid YAML: duplicate key 'id'",
    ),
    "list key": ("? [1]\n: 2", ":1: not valid YAML: a key that is a list or a mapping"),
    "unknown tag": (
        "tasks: !python/object {}",
        ":1: not valid YAML: could not determine a constructor for the tag '!python/object'",
    ),
}


@pytest.mark.parametrize(("text", "message"), YAML_ERRORS.values(), ids=YAML_ERRORS.keys())
def test_a_yaml_suite_error_names_the_place(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    assert str(failure(path)) == f"{path}{message}"


def test_the_error_carries_its_parts(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(YAML_ERRORS["unknown grader"][0], encoding="utf-8")
    error = failure(path)
    assert (error.file, error.task_index, error.task_id, error.field, error.line) == (
        str(path),
        1,  # 0-based, like Task.index
        "refund",
        "grader",
        None,
    )
    assert error.message == f"unknown grader 'exactly' (graders: {GRADERS})"


JSON_ERRORS = {
    "bad json": ('{"tasks": [}', ":1: not valid JSON: Expecting value (column 12)"),
    "duplicate json key": ('{"tasks": [], "tasks": []}', ": not valid JSON: duplicate key 'tasks'"),
    "NaN": ('{"timeout_s": NaN, "tasks": []}', ": not valid JSON: NaN is not a JSON number"),
    "too deep": (
        '{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}",
        ": not valid JSON: nested too deep",
    ),
    "lone surrogate": (
        '{"tasks": [{"id": "a", "prompt": "p"}, {"id": "b", "prompt": "x\\ud800"}]}',
        ": task 2 (id 'b'): field 'prompt': holds a lone surrogate, which is not Unicode text",
    ),
    "too many tasks": (
        json.dumps({"tasks": [{"id": str(i), "prompt": "p"} for i in range(10_001)]}),
        ": field 'tasks': must hold 1..10,000 tasks, got 10,001",
    ),
}


@pytest.mark.parametrize(("text", "message"), JSON_ERRORS.values(), ids=JSON_ERRORS.keys())
def test_a_json_suite_error_names_the_place(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    assert str(failure(path)) == f"{path}{message}"


JSONL_ERRORS = {
    "a task": (
        '{"id": "a", "prompt": "p"}\n\n'
        '{"id": "b", "prompt": "p", "grader": "json", "expected_output": "x"}\n',
        ":3: task 2 (id 'b'): field 'expected_output': grader 'json' parses a string as JSON,"
        " and this one does not parse (Expecting value: line 1 column 1 (char 0));"
        " to expect a JSON string, quote it",
    ),
    "a line": (
        '{"id": "a", "prompt": "p"}\n{"id": "b",\n',
        ":2: not valid JSON: Expecting property name enclosed in double quotes (column 12)",
    ),
    "a duplicate key": (
        '{"id": "a", "id": "b", "prompt": "p"}',
        ":1: not valid JSON: duplicate key 'id'",
    ),
    "not an object": (
        '{"id": "a", "prompt": "p"}\n["b"]',
        ":2: task 2: expected a task object, got a list",
    ),
    "a suite field": (
        '{"id": "a", "prompt": "p", "rounds": 2}',
        ":1: task 1 (id 'a'): field 'rounds': unknown field (fields: " + TASK_FIELDS + ")",
    ),
    "no task": ("\n\n", ": field 'tasks': must hold 1..10,000 tasks, got 0"),
    "lone surrogate": (
        '{"id": "a", "prompt": "p"}\n{"id": "b", "prompt": "p", "metadata": {"\\udc00": 1}}',
        ":2: task 2 (id 'b'): field 'metadata': holds a lone surrogate, which is not Unicode text",
    ),
}


@pytest.mark.parametrize(("text", "message"), JSONL_ERRORS.values(), ids=JSONL_ERRORS.keys())
def test_a_json_lines_error_names_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    assert str(failure(path)) == f"{path}{message}"


def test_a_json_lines_suite_is_named_after_a_valid_stem(tmp_path: Path) -> None:
    path = tmp_path / "my suite.jsonl"
    path.write_text('{"id": "a", "prompt": "p"}', encoding="utf-8")
    assert str(failure(path)) == (
        f"{path}: field 'name': not given, and the file's stem 'my suite'"
        " does not match [A-Za-z0-9._-]{1,64}"
    )


def test_files_that_cannot_be_suites(tmp_path: Path) -> None:
    text = tmp_path / "s.txt"
    text.write_text("tasks: []", encoding="utf-8")
    assert (
        str(failure(text))
        == f"{text}: unknown suite format '.txt' (use .yaml, .yml, .json, .jsonl)"
    )
    missing = tmp_path / "missing.yaml"
    assert str(failure(missing)) == f"{missing}: cannot read the file: No such file or directory"
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9")
    assert str(failure(latin)) == f"{latin}: not UTF-8 text (byte 9)"
    control = tmp_path / "control.yaml"
    control.write_text("name: \x01", encoding="utf-8")
    assert str(failure(control)).startswith(
        f"{control}: not valid YAML: unacceptable character #x0001"
    )


DIGITS = "9" * 5000  # past Python's 4,300-digit limit of int <-> text (issue 37 item 13)
HUGE_NUMBERS = {
    "yaml rounds": ("s.yaml", f"rounds: {DIGITS}\ntasks: {ONE}", ": field 'rounds'"),
    "yaml hex rounds": ("s.yaml", f"rounds: 0x{'f' * 5000}\ntasks: {ONE}", ": field 'rounds'"),
    "yaml max_tokens": (
        "s.yaml",
        f"max_tokens: {DIGITS}\ntasks: {ONE}",
        ": field 'max_tokens'",
    ),
    "yaml task timeout": (
        "s.yaml",
        f"tasks: [{{id: a, prompt: p, timeout_s: {DIGITS}}}]",
        ": task 1 (id 'a'): field 'timeout_s'",
    ),
    "yaml answer key": (
        "s.yaml",
        f"tasks: [{{id: a, prompt: p, expected_output: {DIGITS}}}]",
        ": task 1 (id 'a'): field 'expected_output'",
    ),
    "yaml metadata": (
        "s.yaml",
        f"tasks: [{{id: a, prompt: p, metadata: {{n: [0x{'f' * 5000}]}}}}]",
        ": task 1 (id 'a'): field 'metadata'",
    ),
    "json rounds": (
        "s.json",
        f'{{"rounds": {DIGITS}, "tasks": [{{"id": "a", "prompt": "p"}}]}}',
        ": field 'rounds'",
    ),
    "json lines max_tokens": (
        "s.jsonl",
        f'{{"id": "a", "prompt": "p", "max_tokens": {DIGITS}}}',
        ":1: task 1 (id 'a'): field 'max_tokens'",
    ),
}


@pytest.mark.parametrize(("name", "text", "place"), HUGE_NUMBERS.values(), ids=HUGE_NUMBERS.keys())
def test_a_number_of_thousands_of_digits_is_an_error_naming_its_field(
    tmp_path: Path, name: str, text: str, place: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    message = str(failure(path))
    assert message.startswith(f"{path}{place}: "), message
    assert "digit" in message and len(message) < 300  # named by its length, not written out


def test_nested_yaml_aliases_are_refused_before_they_expand(tmp_path: Path) -> None:
    """A 'billion laughs' suite of under 1 KB: ten levels of ten aliases, 10^10 strings."""
    levels = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    text = "tasks:\n  - id: a\n    prompt: p\n  - id: laughs\n    prompt: p\n    metadata:\n"
    path = tmp_path / "laughs.yaml"
    path.write_text(text + "".join(f"      {line}\n" for line in levels), encoding="utf-8")
    assert path.stat().st_size < 1024
    assert str(failure(path)) == (
        f"{path}: task 2 (id 'laughs'): field 'metadata': the suite's answer keys and metadata"
        " take more than 134,217,728 bytes written out (a YAML alias repeats its anchor's"
        " value each time it is used)"
    )


def test_aliases_that_expand_modestly_still_load(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(
        "tasks:\n"
        + "".join(
            f"  - {{id: t{i}, prompt: p, metadata: {'&m {k: [1, 2]}' if i == 0 else '*m'}}}\n"
            for i in range(2000)
        ),
        encoding="utf-8",
    )
    suite = load_suite(path)
    assert len(suite.tasks) == 2000 and suite.tasks[1999].metadata == {"k": [1, 2]}
