"""The active set (CONVENTIONS.md section 4): the user's files, in the order
given, then the built-in files, in the order of their file names; loaded,
checked and compiled once, with the digest every run records.

Users' files come from `--conventions PATH` / BADGE_CONVENTIONS: each path a
file, or a folder whose *.yaml / *.yml files load in name order. A file
that fails to load (bad YAML, unknown field, bad regex, duplicate name)
fails the whole set: `serve` does not start on half of the user's rules.

A set is rebuilt from its sources' texts (`ConventionSet.sources`), which is
how the decoder processes get the very set the server loaded, whatever
happens to the files after start.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import rfc8785

from collector.conventions.engine import Recognizer
from collector.conventions.files import Convention, load_text
from collector.conventions.problems import ConventionError, Problem

BUILT_IN = "built-in"
_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class ConventionSource:
    origin: str  # BUILT_IN, or the path the user gave
    file: str  # how problems name it: the file's path, or `built-in/<name>`
    text: str


@dataclass(frozen=True)
class ConventionSet:
    """The compiled active conventions: what recognises spans, the attribute
    keys they read (proto lifts them at decode), and the digest."""

    conventions: tuple[Convention, ...]
    sources: tuple[ConventionSource, ...]  # what it was compiled from, in order
    digest: str
    recognizer: Recognizer = field(repr=False)

    @property
    def keys(self) -> frozenset[str]:
        return self.recognizer.keys


def builtin_sources() -> tuple[ConventionSource, ...]:
    """The shipped files, by file name: the name's number is its place."""
    folder = resources.files("collector.conventions") / "builtin"
    found = sorted(
        (item for item in folder.iterdir() if item.name.endswith(_SUFFIXES)),
        key=lambda item: item.name,
    )
    return tuple(
        ConventionSource(BUILT_IN, f"{BUILT_IN}/{item.name}", item.read_text("utf-8"))
        for item in found
    )


def user_sources(paths: Iterable[str]) -> tuple[ConventionSource, ...]:
    """The user's files in the order given, each folder's in name order."""
    found: list[ConventionSource] = []
    problems: list[Problem] = []
    for given in paths:
        path = Path(given).expanduser()
        try:
            files = (
                sorted(p for p in path.iterdir() if p.suffix in _SUFFIXES and p.is_file())
                if path.is_dir()
                else [path]
            )
        except OSError as exc:
            problems.append(Problem(str(path), None, "file", f"cannot be read: {exc.strerror}"))
            continue
        for file in files:
            try:
                found.append(ConventionSource(str(given), str(file), file.read_text("utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                problems.append(Problem(str(file), None, "file", f"cannot be read: {reason}"))
    if problems:
        raise ConventionError(problems)
    return tuple(found)


def compile_set(sources: Sequence[ConventionSource]) -> ConventionSet:
    """The set in this order; ConventionError naming every problem of every file."""
    conventions: list[Convention] = []
    problems: list[Problem] = []
    first_file: dict[str, str] = {}
    for source in sources:
        try:
            shown = BUILT_IN if source.origin == BUILT_IN else source.file
            convention = load_text(source.text, source.file, shown)
        except ConventionError as exc:
            problems += exc.problems
            continue
        if convention.name in first_file:
            problems.append(
                Problem(
                    source.file,
                    convention.line,
                    "convention",
                    f"the name {convention.name!r} is taken by {first_file[convention.name]}",
                )
            )
            continue
        first_file[convention.name] = source.file
        conventions.append(convention)
    if problems:
        raise ConventionError(problems)
    return ConventionSet(
        tuple(conventions), tuple(sources), digest(conventions), Recognizer(conventions)
    )


def load_active(paths: Iterable[str] = ()) -> ConventionSet:
    """The user's files (paths as `--conventions` gives them), then the built-ins."""
    return compile_set(user_sources(paths) + builtin_sources())


@functools.cache
def builtin_set() -> ConventionSet:
    """The built-ins alone, compiled once: what a collector given no file of
    its own uses (and what tests and benches build spans with)."""
    return load_active(())


def digest(conventions: Sequence[Convention]) -> str:
    """SHA-256 (hex, 16 characters) of the RFC 8785 form of the active list of
    {convention, version, content}: what changes when any rule, its order or
    the set of files changes (section 4)."""
    listed = [
        {"convention": c.name, "version": c.version, "content": c.content} for c in conventions
    ]
    return hashlib.sha256(rfc8785.dumps(listed)).hexdigest()[:16]
