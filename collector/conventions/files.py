"""One convention file (CONVENTIONS.md section 1): YAML text -> a compiled
`Convention`, or every problem it has.

The schema is exactly the spec's: `convention`, `version`, `description`,
`applies_to`, the rule lists `not_a_step`, `tool`, `llm`, `agent`, and
`usage`; a rule is `when` plus its role's sources. Any other field anywhere
is an error, so a misspelt field cannot silently match nothing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import rfc8785

from collector.conventions import shapes
from collector.conventions.conditions import Condition, compile_condition
from collector.conventions.problems import ConventionError, Report
from collector.conventions.sources import Source, compile_source
from collector.conventions.yaml_tree import Located, YamlProblem, parse, plain, problem

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# The rule lists, in the order a convention's rules are tried (section 4).
RULE_ROLES = ("not_a_step", "tool", "llm", "agent")
_RULE_FIELDS = {
    "not_a_step": ("when", "tool_name", "call_id"),
    "tool": ("when", "tool_name", "call_id"),
    "llm": ("when", "model"),
    "agent": ("when",),
}
_TOP_FIELDS = ("convention", "version", "description", "applies_to", *RULE_ROLES, "usage")
USAGE_FIELDS = ("input_tokens", "output_tokens", "cost_usd")
_MAX_VERSION = 2**53 - 1  # a number canonical JSON (the digest) keeps exact


@dataclass(frozen=True, slots=True)
class Rule:
    role: str  # one of RULE_ROLES
    index: int  # 0-based, within its role's list
    when: Condition
    tool_name: Source | None = None
    call_id: Source | None = None
    model: Source | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Where tokens and cost are read; None: the built-in GenAI keys."""

    input_tokens: Source | None = None
    output_tokens: Source | None = None
    cost_usd: Source | None = None


@dataclass(frozen=True, slots=True)
class Convention:
    name: str
    version: int
    description: str
    source: str  # "built-in", or the path of the file it was loaded from
    applies_to: Condition | None
    rules: tuple[Rule, ...]  # in the order they are tried
    usage: Usage
    content: Any  # the file's mapping as loaded: what the digest covers
    line: int  # where `convention:` is written

    @property
    def keys(self) -> frozenset[str]:
        """Every span attribute key its conditions and sources read."""
        found: set[str] = set(self.applies_to.keys) if self.applies_to else set()
        for rule in self.rules:
            found |= rule.when.keys
            for source in (rule.tool_name, rule.call_id, rule.model):
                found |= source.keys if source is not None else frozenset()
        for source in (self.usage.input_tokens, self.usage.output_tokens, self.usage.cost_usd):
            found |= source.keys if source is not None else frozenset()
        return frozenset(found)


@functools.lru_cache(maxsize=256)
def load_text(text: str, file: str, source: str) -> Convention:
    """The file's convention; ConventionError naming every problem.

    Kept per text: a process that builds several collectors, or reclassifies
    and serves, compiles the same files each time (the result is frozen; a
    file with problems is not kept, and says them again)."""
    report = Report(file)
    try:
        tree = parse(text)
    except YamlProblem as exc:
        raise ConventionError([problem(file, exc)]) from None
    if tree is None or not isinstance(tree.value, dict):
        line = tree.line if tree is not None else 1
        report.add(line, "file", "a convention file must be a mapping (it is empty or is not)")
        raise ConventionError(report.problems)
    found = _convention(tree, source, report)
    if found is not None and not report.problems:
        try:
            rfc8785.dumps(found.content)  # the digest's form of it (section 4)
        except rfc8785.CanonicalizationError as exc:
            report.add(tree.line, "convention", f"holds a value canonical JSON cannot: {exc}")
    if found is None or report.problems:
        raise ConventionError(report.problems)
    return found


def _convention(tree: Located, source: str, report: Report) -> Convention | None:
    entries = shapes.fields(tree, "", _TOP_FIELDS, report, "a convention file")
    if entries is None:
        return None
    name = _name(tree, entries, report)
    version = _version(tree, entries, report)
    description = ""
    if "description" in entries:
        node = entries["description"]
        if isinstance(node.value, str):
            description = node.value
        else:
            report.add(node.line, "description", f"must be text, not {plain(node)!r}")
    applies_to = None
    if "applies_to" in entries:
        applies_to = compile_condition(entries["applies_to"], "applies_to", report)
    rules: list[Rule] = []
    for role in RULE_ROLES:
        if role in entries:
            rules += _rules(entries[role], role, report)
    usage = _usage(entries["usage"], report) if "usage" in entries else Usage()
    if name is None or version is None:
        return None
    return Convention(
        name,
        version,
        description,
        source,
        applies_to,
        tuple(rules),
        usage,
        plain(tree),
        shapes.key_line(tree, "convention"),
    )


def _name(tree: Located, entries: dict[str, Located], report: Report) -> str | None:
    if "convention" not in entries:
        report.add(tree.line, "convention", "required: the convention's name")
        return None
    node = entries["convention"]
    if isinstance(node.value, str) and NAME.fullmatch(node.value):
        return node.value
    report.add(
        node.line,
        "convention",
        f"{plain(node)!r} is no name: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit",
    )
    return None


def _version(tree: Located, entries: dict[str, Located], report: Report) -> int | None:
    if "version" not in entries:
        report.add(tree.line, "version", "required: a whole number from 1, bumped on change")
        return None
    node = entries["version"]
    value = node.value
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MAX_VERSION:
        return value
    report.add(node.line, "version", f"must be a whole number from 1, not {plain(node)!r}")
    return None


def _rules(node: Located, role: str, report: Report) -> list[Rule]:
    if not isinstance(node.value, list):
        report.add(node.line, role, "must be a list of rules")
        return []
    rules: list[Rule] = []
    for index, item in enumerate(node.value):
        path = shapes.child(role, index)
        entries = shapes.fields(item, path, _RULE_FIELDS[role], report, f"a {role} rule")
        if entries is None:
            continue
        if "when" not in entries:
            report.add(item.line, shapes.child(path, "when"), "required: the rule's condition")
            continue
        when = compile_condition(entries["when"], shapes.child(path, "when"), report)
        sources = {
            field: compile_source(entries[field], shapes.child(path, field), report)
            for field in ("tool_name", "call_id", "model")
            if field in entries
        }
        if when is not None and None not in sources.values():
            rules.append(Rule(role, index, when, **sources))
    return rules


def _usage(node: Located, report: Report) -> Usage:
    entries = shapes.fields(node, "usage", USAGE_FIELDS, report, "usage")
    if entries is None:
        return Usage()
    found = {
        field: compile_source(value, shapes.child("usage", field), report)
        for field, value in entries.items()
    }
    return Usage(**found)
