"""Build conventions from YAML text in a test, and recognise spans with them."""

from __future__ import annotations

import textwrap
from typing import Any

from collector.conventions import ConventionSet, ConventionSource, Recognition, compile_set
from collector.conventions.active import builtin_sources


def convention_set(*texts: str, builtins: bool = False) -> ConventionSet:
    """Each text a user's file (`test-N.yaml`), in order; the built-ins after."""
    sources = tuple(
        ConventionSource(f"test-{n}.yaml", f"test-{n}.yaml", textwrap.dedent(text))
        for n, text in enumerate(texts)
    )
    return compile_set(sources + (builtin_sources() if builtins else ()))


def recognise(
    conventions: ConventionSet,
    name: str = "span",
    attrs: dict[str, Any] | None = None,
    *,
    kind: int = 1,
    status: int = 0,
    scope: str = "",
    resource: dict[str, Any] | None = None,
) -> Recognition:
    return conventions.recognizer.recognise(name, kind, status, scope, attrs or {}, resource or {})


def one_rule(when: str, role: str = "tool", extra: str = "") -> ConventionSet:
    """A convention whose only rule is `role` with this condition (YAML flow text)."""
    return convention_set(f"convention: t\nversion: 1\n{role}:\n  - when: {when}\n{extra}")
