"""YAML text -> a tree of values that remember their line.

PyYAML's `safe_load` forgets where a value was written; a load error must
name the line (CONVENTIONS.md section 4). So the document is composed into
nodes (which carry their position), merge keys are flattened as `safe_load`
would, and each scalar is constructed by the safe constructor: the values are
exactly what `safe_load` gives, and `plain` turns the tree back into them.
Duplicate keys, which `safe_load` silently resolves to the last, are errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml  # type: ignore[import-untyped]

from collector.conventions.problems import Problem


@dataclass(frozen=True, slots=True)
class Located:
    """A YAML value and the 1-based line it starts on. A mapping's value is a
    dict of its keys to `Located` values (keys are text), a sequence's a list."""

    value: Any
    line: int
    key_lines: dict[str, int] | None = None  # a mapping's keys -> the line each is on


# libyaml's parser where PyYAML was built with it: the same nodes and marks
# for a fifth of the CPU; every server and command start parses the shipped
# files (issue 43).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlProblem(Exception):
    """The text is no YAML document of the expected shape."""

    def __init__(self, line: int | None, field: str, message: str) -> None:
        super().__init__(message)
        self.line, self.field, self.message = line, field, message


def parse(text: str) -> Located | None:
    """The document's tree, or None for an empty document; YamlProblem if the
    text is not one YAML document."""
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else None
            raise YamlProblem(line, "yaml", str(exc.problem or exc)) from None
        except yaml.YAMLError as exc:
            raise YamlProblem(None, "yaml", str(exc)) from None
        if node is None:
            return None
        return _tree(loader, node, "", set())
    finally:
        loader.dispose()


def _tree(loader: yaml.SafeLoader, node: yaml.Node, path: str, active: set[int]) -> Located:
    line = node.start_mark.line + 1
    if id(node) in active:  # an alias of a node that contains it
        raise YamlProblem(line, path or "yaml", "a recursive alias")
    if isinstance(node, yaml.MappingNode):
        try:
            loader.flatten_mapping(node)  # `<<: *base` as safe_load applies it
        except yaml.MarkedYAMLError as exc:
            raise YamlProblem(line, path or "yaml", str(exc.problem or exc)) from None
        active.add(id(node))
        found: dict[str, Located] = {}
        key_lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = _scalar(loader, key_node, path)
            where = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str):
                raise YamlProblem(key_node.start_mark.line + 1, where, "keys must be text")
            if key in found:
                raise YamlProblem(key_node.start_mark.line + 1, where, "given twice")
            key_lines[key] = key_node.start_mark.line + 1
            found[key] = _tree(loader, value_node, where, active)
        active.discard(id(node))
        return Located(found, line, key_lines)
    if isinstance(node, yaml.SequenceNode):
        active.add(id(node))
        items = [_tree(loader, item, f"{path}[{i}]", active) for i, item in enumerate(node.value)]
        active.discard(id(node))
        return Located(items, line)
    return Located(_scalar(loader, node, path), line)


def _scalar(loader: yaml.SafeLoader, node: yaml.Node, path: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise YamlProblem(node.start_mark.line + 1, path or "yaml", "a key must be text")
    try:
        return loader.construct_object(node, deep=True)
    except yaml.MarkedYAMLError as exc:
        raise YamlProblem(node.start_mark.line + 1, path or "yaml", str(exc.problem)) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(node.start_mark.line + 1, path or "yaml", str(exc)) from None
    except (ValueError, TypeError, AttributeError, OverflowError):
        # A tag the text cannot be (`!!int x`, `!!timestamp x`): PyYAML's safe
        # constructors raise what int(), float() and a failed regex match do.
        tag = str(node.tag).rsplit(":", 1)[-1]
        message = f"{node.value!r} is not a valid !!{tag}"
        raise YamlProblem(node.start_mark.line + 1, path or "yaml", message) from None


def plain(tree: Located) -> Any:
    """The value as `yaml.safe_load` gives it."""
    value = tree.value
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def problem(file: str, exc: YamlProblem) -> Problem:
    return Problem(file, exc.line, exc.field, exc.message)
