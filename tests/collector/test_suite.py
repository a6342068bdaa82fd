"""Screening suites (SCREEN.md section 1): real files in tmp_path, their defaults and digest.

The error classes, one message each, are in test_suite_errors.py.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from collector.screening import suite_files
from collector.screening.suite import Suite, Task, canonical_json, load_suite

KNOWN_YAML = """\
name: support
rounds: 2
timeout_s: 30
tasks:
  - id: refund
    prompt: How do I get a refund?
    expected_output: Open Orders and choose Refund
  - id: hours
    prompt: When are you open?
    grader: completion
    max_tokens: 64
  - id: total
    prompt: Total as JSON
    expected_output: {total: 12.5, currency: "€"}
    grader: json
    timeout_s: 5
    metadata: {lang: fr}
"""
# Written out by hand from SCREEN.md section 1: sorted keys, no spaces, every
# default filled in, timeouts as floats, the euro sign as itself.
KNOWN_CANONICAL = (
    '{"max_tokens":256,"name":"support","rounds":2,"send_expected":false,"tasks":['
    '{"expected_output":"Open Orders and choose Refund","grader":"fuzzy","id":"refund",'
    '"max_tokens":256,"prompt":"How do I get a refund?","timeout_s":30.0},'
    '{"grader":"completion","id":"hours","max_tokens":64,"prompt":"When are you open?",'
    '"timeout_s":30.0},'
    '{"expected_output":{"currency":"€","total":12.5},"grader":"json","id":"total",'
    '"max_tokens":256,"metadata":{"lang":"fr"},"prompt":"Total as JSON","timeout_s":5.0}],'
    '"timeout_s":30.0}'
)
# `printf '%s' "$KNOWN_CANONICAL" | sha256sum`, computed outside the code under test.
KNOWN_DIGEST = "0e47a137356236bf99e032435738f4a7b3e915ed854ee9481dc1b6637998b990"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def dump(tmp_path: Path, name: str, suite: object) -> Path:
    """The same suite as JSON or YAML, from one Python value."""
    if name.endswith(".json"):
        return write(tmp_path, name, json.dumps(suite, ensure_ascii=False))
    return write(tmp_path, name, yaml.safe_dump(suite, allow_unicode=True))


def test_a_suite_loads_with_every_default_filled_in(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, "known.yaml", KNOWN_YAML))
    assert suite == Suite(
        name="support",
        rounds=2,
        timeout_s=30.0,
        max_tokens=256,
        send_expected=False,
        tasks=(
            Task("refund", "How do I get a refund?", "fuzzy", 256, 30.0, True,
                 "Open Orders and choose Refund", None, 0),
            Task("hours", "When are you open?", "completion", 64, 30.0, False, None, None, 1),
            Task("total", "Total as JSON", "json", 256, 5.0, True,
                 {"total": 12.5, "currency": "€"}, {"lang": "fr"}, 2),
        ),
        digest=KNOWN_DIGEST,
        path=str(tmp_path / "known.yaml"),
    )  # fmt: skip
    assert isinstance(suite.timeout_s, float) and isinstance(suite.tasks[2].timeout_s, float)


def test_the_digest_is_the_hand_checked_canonical_form(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, "known.yaml", KNOWN_YAML))
    assert canonical_json(suite) == KNOWN_CANONICAL
    assert hashlib.sha256(KNOWN_CANONICAL.encode("utf-8")).hexdigest() == KNOWN_DIGEST
    assert suite.digest == KNOWN_DIGEST


def test_the_defaults_of_a_minimal_suite(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, "smoke-1.yml", "tasks: [{id: a, prompt: p}]"))
    assert (suite.name, suite.rounds, suite.timeout_s, suite.max_tokens) == (
        "smoke-1",
        3,
        60.0,
        256,
    )
    assert suite.send_expected is False
    assert suite.tasks[0] == Task("a", "p", "completion", 256, 60.0, False, None, None, 0)


def test_the_suite_grader_is_every_task_default_and_a_task_overrides_it(tmp_path: Path) -> None:
    text = """\
grader: words
tasks:
  - {id: a, prompt: p, expected_output: x}
  - {id: b, prompt: p, expected_output: x, grader: exact}
"""
    suite = load_suite(write(tmp_path, "s.yaml", text))
    assert [task.grader for task in suite.tasks] == ["words", "exact"]


def test_an_expected_output_of_null_is_an_answer_key(tmp_path: Path) -> None:
    suite = load_suite(
        write(
            tmp_path, "s.json", '{"tasks": [{"id": "a", "prompt": "p", "expected_output": null}]}'
        )
    )
    task = suite.tasks[0]
    assert (task.has_expected, task.expected_output, task.grader) == (True, None, "fuzzy")
    assert '"expected_output":null' in canonical_json(suite)


def test_json_lines_name_the_suite_after_the_file_and_skip_blank_lines(tmp_path: Path) -> None:
    text = '{"id": "a", "prompt": "p"}\n\n   \n{"id": "b", "prompt": "q", "expected_output": 1}\n'
    suite = load_suite(write(tmp_path, "nightly.v2.jsonl", text))
    assert suite.name == "nightly.v2"
    assert [(t.id, t.index, t.grader) for t in suite.tasks] == [
        ("a", 0, "completion"),
        ("b", 1, "fuzzy"),
    ]


def test_yaml_anchors_and_merge_keys_share_fields(tmp_path: Path) -> None:
    text = """\
tasks:
  - &base {id: a, prompt: p, metadata: &meta {team: billing}, max_tokens: 9}
  - {<<: *base, id: b, metadata: *meta}
"""
    suite = load_suite(write(tmp_path, "s.yaml", text))
    assert [(t.id, t.max_tokens, t.metadata) for t in suite.tasks] == [
        ("a", 9, {"team": "billing"}),
        ("b", 9, {"team": "billing"}),
    ]


def test_the_limits_themselves_are_accepted(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "p"} for i in range(9_999)] + [
        {"id": "x" * 256, "prompt": "p"}
    ]
    suite = load_suite(dump(tmp_path, "s.json", {"rounds": 100, "timeout_s": 600, "tasks": tasks}))
    assert (len(suite.tasks), suite.rounds, suite.timeout_s) == (10_000, 100, 600.0)


def test_a_byte_order_mark_and_an_upper_case_extension_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "S.JSON"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"tasks": [{"id": "a", "prompt": "p"}]}')
    assert load_suite(path).name == "S"


def test_yaml_booleans_are_booleans(tmp_path: Path) -> None:
    text = "send_expected: true\ntasks: [{id: a, prompt: p}]"
    assert load_suite(write(tmp_path, "s.yaml", text)).send_expected is True


def test_the_examples_in_the_docs_load(tmp_path: Path) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "screening.md").read_text(encoding="utf-8")
    section = docs.split("## Suites", 1)[1].split("\n## ", 1)[0]
    yaml_example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    jsonl_example = section.split("```json\n", 1)[1].split("```", 1)[0]
    suite = load_suite(write(tmp_path, "support.yaml", yaml_example))
    assert [t.grader for t in suite.tasks] == ["fuzzy", "regex", "json", "completion"]
    assert len(load_suite(write(tmp_path, "nightly.jsonl", jsonl_example)).tasks) == 2


# -- the digest ------------------------------------------------------------------------

BASE: dict[str, object] = {
    "name": "base",
    "tasks": [
        {"id": "a", "prompt": "p", "expected_output": {"x": [1, 2]}, "metadata": {"k": "v"}},
        {"id": "b", "prompt": "q"},
    ],
}


def test_the_digest_ignores_key_order_and_format(tmp_path: Path) -> None:
    reordered = """\
tasks:
  - timeout_s: 5
    metadata: {lang: fr}
    grader: json
    expected_output: {currency: "€", total: 12.5}
    prompt: Total as JSON
    id: total
  - prompt: When are you open?
    max_tokens: 64
    id: hours
    grader: completion
  - expected_output: Open Orders and choose Refund
    id: refund
    prompt: How do I get a refund?
timeout_s: 30.0
rounds: 2
name: support
"""
    moved = load_suite(write(tmp_path, "moved.yaml", reordered))
    assert moved.digest != KNOWN_DIGEST  # the tasks moved: a different suite
    tasks = yaml.safe_load(KNOWN_YAML)["tasks"]
    same = {"timeout_s": 30.0, "tasks": tasks, "name": "support", "rounds": 2}
    assert load_suite(dump(tmp_path, "same.json", same)).digest == KNOWN_DIGEST
    same_yaml = {**same, "tasks": [dict(reversed(list(task.items()))) for task in tasks]}
    assert load_suite(dump(tmp_path, "same.yaml", same_yaml)).digest == KNOWN_DIGEST


def test_the_digest_ignores_defaults_written_out(tmp_path: Path) -> None:
    implied = load_suite(dump(tmp_path, "implied.json", BASE))
    spelled = {
        "name": "base",
        "rounds": 3,
        "timeout_s": 60.0,
        "max_tokens": 256,
        "send_expected": False,
        "tasks": [
            {**BASE["tasks"][0], "grader": "fuzzy", "timeout_s": 60, "max_tokens": 256},  # type: ignore[index]
            {"id": "b", "prompt": "q", "grader": "completion"},
        ],
    }
    assert load_suite(dump(tmp_path, "spelled.yaml", spelled)).digest == implied.digest


CHANGES: dict[str, Callable[[dict[str, Any]], object]] = {
    "name": lambda s: s.update(name="other"),
    "rounds": lambda s: s.update(rounds=4),
    "timeout": lambda s: s.update(timeout_s=61),
    "max_tokens": lambda s: s.update(max_tokens=255),
    "send_expected": lambda s: s.update(send_expected=True),
    "suite grader": lambda s: s.update(grader="completion"),
    "task id": lambda s: s["tasks"][1].update(id="c"),
    "prompt": lambda s: s["tasks"][1].update(prompt="q "),
    "expected": lambda s: s["tasks"][0].update(expected_output={"x": [2, 1]}),
    "expected 1.0": lambda s: s["tasks"][0].update(expected_output={"x": [1.0, 2]}),
    "no expected": lambda s: s["tasks"][0].pop("expected_output"),
    "task grader": lambda s: s["tasks"][0].update(grader="words"),
    "task max_tokens": lambda s: s["tasks"][1].update(max_tokens=1),
    "task timeout": lambda s: s["tasks"][1].update(timeout_s=59.5),
    "metadata": lambda s: s["tasks"][0].update(metadata={"k": "w"}),
    "empty metadata": lambda s: s["tasks"][1].update(metadata={}),
    "task order": lambda s: s["tasks"].reverse(),
    "one more task": lambda s: s["tasks"].append({"id": "c", "prompt": "r"}),
}


def test_any_change_changes_the_digest(tmp_path: Path) -> None:
    digests = {"base": load_suite(dump(tmp_path, "s.json", BASE)).digest}
    for change, apply in CHANGES.items():
        suite = json.loads(json.dumps(BASE))
        apply(suite)
        digests[change] = load_suite(dump(tmp_path, "s.json", suite)).digest
    assert len(set(digests.values())) == len(digests), digests


# -- the YAML loaders --------------------------------------------------------------------


def test_the_pure_python_yaml_loader_reads_the_same_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = load_suite(write(tmp_path, "known.yaml", KNOWN_YAML))
    assert issubclass(suite_files._Loader, yaml.CSafeLoader)
    monkeypatch.delattr(yaml, "CSafeLoader")  # as on a PyYAML built without libyaml
    try:
        slow = importlib.reload(suite_files)
        assert not issubclass(slow._Loader, yaml.CLoader)
        document, _ = slow.read_suite_file(tmp_path / "known.yaml")
        assert document == yaml.safe_load(KNOWN_YAML)
    finally:
        monkeypatch.undo()
        importlib.reload(suite_files)
    assert fast.digest == KNOWN_DIGEST


def test_the_yaml_loader_builds_what_pyyaml_builds(tmp_path: Path) -> None:
    text = """\
base: &b {x: 1, y: [1, 2], z: ~, w: yes, v: 0x10, u: 1.5}
other: {<<: *b, y: 3, s: *b}
"""
    document, _ = suite_files.read_suite_file(write(tmp_path, "s.yaml", text))
    assert document == yaml.load(text, Loader=yaml.CSafeLoader)
    assert document["other"]["s"] is document["base"]  # an alias is the anchor's value
