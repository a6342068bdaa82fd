"""Reading a suite file (SCREEN.md section 1): YAML, JSON or JSON Lines into plain values.

Every format comes out as one shape, a dict of suite fields (JSON Lines: only
`tasks`), so `suite` checks them all the same way. A file that is not what its
extension says is a SuiteError like any other suite error. Duplicate keys
are refused in every format: the parsers would keep the last one silently,
and a task with two `grader:` lines is a mistake, not a choice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import yaml  # type: ignore[import-untyped]

from collector.screening.suite_fields import SuiteError, kind_of, number_or_long

# The C loader parses a 10,000-task suite several times faster than the pure one.
_YamlBase: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_STR_TAG: Final = "tag:yaml.org,2002:str"
_SEQ_TAG: Final = "tag:yaml.org,2002:seq"
_MAP_TAG: Final = "tag:yaml.org,2002:map"
_INT_TAG: Final = "tag:yaml.org,2002:int"
SUFFIXES: Final = (".yaml", ".yml", ".json", ".jsonl")


def read_suite_file(path: Path) -> tuple[dict[str, Any], list[int] | None]:
    """The suite's fields, and for JSON Lines the line number of each task."""
    file = str(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise SuiteError(file, f"unknown suite format {path.suffix!r} (use {', '.join(SUFFIXES)})")
    try:
        # utf-8-sig: a byte order mark some Windows editors write is not part of the text.
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise SuiteError(file, f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SuiteError(file, f"not UTF-8 text (byte {exc.start})") from None
    if suffix == ".jsonl":
        tasks, lines = _json_lines(file, text)
        return {"tasks": tasks}, lines
    document = _yaml(file, text) if suffix in (".yaml", ".yml") else _json(file, text, None)
    if not isinstance(document, dict):
        raise SuiteError(file, f"expected a suite object, got {kind_of(document)}")
    return document, None


def _json_lines(file: str, text: str) -> tuple[list[object], list[int]]:
    """One task per line; blank lines are skipped (an editor's trailing newline, a spacer)."""
    tasks: list[object] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            tasks.append(_json(file, line, number))
            lines.append(number)
    return tasks, lines


def _json(file: str, text: str, line: int | None) -> Any:
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_refuse_constant,
            parse_int=number_or_long,  # 5,000 digits: a field error, not a parse error
        )
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise SuiteError(file, f"not valid JSON: {exc.msg} (column {exc.colno})", line=at) from None
    except ValueError as exc:  # a duplicate key, NaN or Infinity
        raise SuiteError(file, f"not valid JSON: {exc}", line=line) from None
    except RecursionError:
        raise SuiteError(file, "not valid JSON: nested too deep", line=line) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return mapping


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


class _Loader(_YamlBase):  # type: ignore[misc]
    """Safe YAML that refuses a key given twice in one mapping, and builds plain values fast.

    PyYAML's own constructor spends more time than its C parser on a large
    suite; strings, lists and dicts (nearly every node of a suite) are built
    here directly, and every other tag goes through the safe constructor.
    """

    def construct_document(self, node: Any) -> Any:
        return self._build(node, {})

    def _build(self, node: Any, built: dict[int, Any]) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if tag == _INT_TAG:
            try:
                return yaml.constructor.SafeConstructor.construct_yaml_int(self, node)
            except ValueError:  # more digits than Python converts: the field's check says so
                return number_or_long(node.value)
        if tag not in (_SEQ_TAG, _MAP_TAG):
            return self.construct_object(node, deep=True)
        if id(node) in built:  # an alias: the anchor's value, shared as PyYAML shares it
            return built[id(node)]
        if tag == _SEQ_TAG:
            items: list[Any] = []
            built[id(node)] = items
            items.extend([self._build(child, built) for child in node.value])
            return items
        mapping: dict[Any, Any] = {}
        built[id(node)] = mapping
        _refuse_duplicate_keys(node)
        if any(key.tag == _MERGE_TAG for key, _ in node.value):
            self.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = self._build(key_node, built)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a key that is a list or a mapping", key_node.start_mark
                ) from None
            mapping[key] = self._build(value_node, built)
        return mapping


def _refuse_duplicate_keys(node: Any) -> None:
    seen: set[tuple[str, str]] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
            key = (key_node.tag, key_node.value)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
            seen.add(key)


def _yaml(file: str, text: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader: builds no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = ", ".join(part for part in (exc.context, exc.problem) if part)
        line = mark.line + 1 if mark is not None else None
        raise SuiteError(file, f"not valid YAML: {problem}", line=line) from None
    except yaml.YAMLError as exc:
        raise SuiteError(file, f"not valid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise SuiteError(file, "not valid YAML: nested too deep") from None
