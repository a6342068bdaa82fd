"""The repository's copies of the reference data still equal the originals.

The copies under tests/fixtures let a clone run its suite alone; the
originals in ../shared/fixtures and ../shared/corpus are the specification's.
Where ../shared is present, any drift between the two fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED

COPIES = {"fixtures": FIXTURES, "corpus": FIXTURES / "corpus"}
# Not copies: the corpus is compared on its own; fuzz/ holds the inputs our
# fuzzer found failing (bench/support/fuzzing.py), recordings/ the
# frameworks we recorded ourselves (recordings/ at the top) and junit/ the
# JUnit schema the reports are checked against, which are ours.
NOT_COPIES = (
    FIXTURES / "corpus",
    FIXTURES / "fuzz",
    FIXTURES / "recordings",
    FIXTURES / "junit",
)


def files(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not any(folder in path.parents for folder in skip)
    }


@pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"{SHARED} is absent: nothing to compare the copies with"
)
@pytest.mark.parametrize("name", sorted(COPIES))
def test_the_copies_equal_the_specification_data(name: str) -> None:
    original = SHARED / name
    copy = COPIES[name]
    skip = NOT_COPIES if name == "fixtures" else ()
    expected, actual = files(original), files(copy, skip)
    assert sorted(actual) == sorted(expected), f"files differ between {copy} and {original}"
    changed = [path for path in expected if actual[path] != expected[path]]
    assert changed == [], f"copies differ from {original}: {changed}"


def test_the_copies_are_there() -> None:
    assert (FIXTURES / "scoring_vectors.json").stat().st_size > 0
    assert any((FIXTURES / "corpus").glob("*/expected.json"))
