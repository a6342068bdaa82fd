"""Convention files are parsed with libyaml's parser when PyYAML has it (a
fifth of the CPU of every server and command start, issue 43): it must give
the trees and the problem lines PyYAML's own parser gives."""

from __future__ import annotations

from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from collector.conventions import yaml_tree
from collector.conventions.active import builtin_sources
from collector.conventions.yaml_tree import Located, YamlProblem, parse

BROKEN = [
    "convention: acme\nversion: [1\n",  # a flow sequence never closed
    "convention: acme\n  version: 1\n",  # indented under a scalar
    "convention: a\nconvention: b\n",  # a key given twice
    "a: &x [*x]\n",  # an alias of the node that contains it
    "a: 'never closed\nb: 1\n",
    "a: 1\n\tb: 2\n",  # a tab where indentation was expected
    "? [a, b]\n: 1\n",  # a key that is not text
    "a: !!int 'x'\n",  # tags the value cannot be
    "a: !!float x\n",
    "a:\n  b: !!timestamp x\n",
    "a: 1\n---\nb: 2\n",  # two documents
    "base: &b {x: 1}\nuse:\n  <<: *b\n  <<: [1]\n",  # a merge of something not a mapping
]


def with_loader(loader: Any, text: str) -> Located | YamlProblem | None:
    saved = yaml_tree._Loader
    yaml_tree._Loader = loader
    try:
        return parse(text)
    except YamlProblem as problem:
        return problem
    finally:
        yaml_tree._Loader = saved


def test_pyyaml_here_has_libyaml_so_the_fast_parser_is_the_one_used() -> None:
    assert yaml.__with_libyaml__ and yaml_tree._Loader is yaml.CSafeLoader


@pytest.mark.parametrize("source", builtin_sources(), ids=lambda s: s.file)
def test_both_parsers_give_the_same_tree_of_every_shipped_file(source: Any) -> None:
    fast = with_loader(yaml.CSafeLoader, source.text)
    assert isinstance(fast, Located)
    assert fast == with_loader(yaml.SafeLoader, source.text)


@pytest.mark.parametrize("text", BROKEN)
def test_both_parsers_refuse_broken_yaml_at_the_same_line_and_field(text: str) -> None:
    fast, own = with_loader(yaml.CSafeLoader, text), with_loader(yaml.SafeLoader, text)
    assert isinstance(fast, YamlProblem) and isinstance(own, YamlProblem), (fast, own)
    assert (fast.line, fast.field) == (own.line, own.field)
