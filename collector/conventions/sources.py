"""Sources (CONVENTIONS.md section 3): where a value is, as a list of places
tried in order; the first that yields a value wins.

- `{attr: KEY}`: the attribute, normalised (a JSON string literal unquoted);
- `{attr: KEY, json: PATH}`: the attribute read as JSON (text parsed, a map or
  list as it is), then the dotted PATH (`usage.input`, `0.total`);
- `{name: REGEX}`: group 1 of the match in the span name;
- `{resource: KEY}`: a resource attribute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from collector.conventions import shapes
from collector.conventions.problems import Report
from collector.conventions.span import SpanView
from collector.conventions.values import at_path, parse_json, yielded
from collector.conventions.yaml_tree import Located

Read = Callable[[SpanView], Any]

_ITEM_FIELDS = ("attr", "json", "name", "resource")
_PLACES = ("attr", "name", "resource")


@dataclass(frozen=True, slots=True)
class Source:
    read: Read  # the first value an item yields, or None
    keys: frozenset[str]  # span attribute keys it reads


def attributes(*keys: str) -> Source:
    """The source `[{attr: K1}, {attr: K2}, ...]`: one loop over the keys, the
    form most sources take (the built-in GenAI keys among them), and the one
    read for most spans, so it is read without a call per place."""
    if len(keys) == 1:
        return Source(_attr(keys[0]), frozenset(keys))

    def read(span: SpanView) -> Any:
        attrs = span.attrs
        for key in keys:
            value = attrs.get(key)
            if value is not None:
                value = yielded(value)
                if value is not None:
                    return value
        return None

    return Source(read, frozenset(keys))


def compile_source(node: Located, path: str, report: Report) -> Source | None:
    """A list of items, or one item alone."""
    listed = node.value if isinstance(node.value, list) else [node]
    if not listed:
        report.add(node.line, path, "must be a non-empty list of places")
        return None
    readers: list[Read] = []
    keys: set[str] = set()
    plain: list[str] = []  # the keys, while every place is a bare {attr: KEY}
    ok = True
    for index, item in enumerate(listed):
        where = shapes.child(path, index) if isinstance(node.value, list) else path
        made = _item(item, where, report)
        if made is None:
            ok = False
            continue
        readers.append(made[0])
        keys |= made[1]
        if isinstance(item.value, dict) and set(item.value) == {"attr"}:
            plain += made[1]
    if not ok:
        return None
    if len(plain) == len(readers):
        return attributes(*plain)
    return first_of(readers, frozenset(keys))


def first_of(readers: list[Read], keys: frozenset[str]) -> Source:
    if len(readers) == 1:
        return Source(readers[0], keys)
    found = tuple(readers)

    def read(span: SpanView) -> Any:
        for reader in found:
            value = reader(span)
            if value is not None:
                return value
        return None

    return Source(read, keys)


def _item(node: Located, path: str, report: Report) -> tuple[Read, frozenset[str]] | None:
    entries = shapes.fields(node, path, _ITEM_FIELDS, report, "a source")
    if entries is None:
        return None
    places = [place for place in _PLACES if place in entries]
    if len(places) != 1:
        report.add(node.line, path, "a source names one of attr, name or resource")
        return None
    place = places[0]
    if "json" in entries and place != "attr":
        report.add(shapes.key_line(node, "json"), shapes.child(path, "json"), "needs attr")
        return None
    where = shapes.child(path, place)
    if place == "name":
        pattern = shapes.regex(entries["name"], where, report)
        if pattern is None:
            return None
        if pattern.groups < 1:
            report.add(entries["name"].line, where, "needs a group: the value is group 1")
            return None
        search = pattern.search

        def named(span: SpanView) -> Any:
            found = search(span.name)
            return yielded(found.group(1)) if found is not None else None

        return named, frozenset()
    key = shapes.text(entries[place], where, report, "an attribute key")
    if key is None:
        return None
    if place == "resource":
        return (lambda span: yielded(span.resource.get(key))), frozenset()
    if "json" not in entries:
        return _attr(key), frozenset({key})
    steps = _json_path(entries["json"], shapes.child(path, "json"), report)
    if steps is None:
        return None
    return _json(key, steps), frozenset({key})


def _attr(key: str) -> Read:
    return lambda span: yielded(span.attrs.get(key))


def _json(key: str, steps: tuple[str, ...]) -> Read:
    def read(span: SpanView) -> Any:
        parsed = span.parsed
        if parsed is None:
            parsed = span.parsed = {}
        if key in parsed:
            document = parsed[key]
        else:
            document = parsed[key] = parse_json(span.attrs.get(key))
        return yielded(at_path(document, steps)) if document is not None else None

    return read


def _json_path(node: Located, path: str, report: Report) -> tuple[str, ...] | None:
    value = node.value
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
    steps = tuple(text.split(".")) if text else ()
    if not steps or not all(step.strip() for step in steps):
        report.add(node.line, path, "must be a dotted path such as usage.input or 0.total")
        return None
    return steps
