"""How `make test` splits the suite between its pytest-xdist workers (issue 43).

A worker that runs one test of a module sets up that module's fixtures, and one
that runs a test of a package sets up the package's: a demo collector filled
with 84 runs and a headless Chromium (tests/dashboard), a schema-driven server,
a corpus replayed once. Split test by test, those would be set up once per
worker. So a package whose conftest.py holds a package-scoped fixture is one
unit of work, a module that uses a module-scoped fixture is one, and any other
test is a unit on its own (a long module of independent tests, such as the
screening faults, is then spread over the workers rather than run last on one).
Each worker has its own PostgreSQL cluster (a session fixture), temp dirs and
ports (port 0), so units are independent.

Which fixtures a test uses is read from the source text, as the scheduler sees
node ids only: a miss costs a second set-up on another worker, never a result.
pytest-xdist's `--dist loadgroup` would let tests say this with marks, but with
pytest 9.2 it groups nothing (it rewrites a node id pytest no longer reads;
pytest-xdist issue 1386).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parents[1]
SHARED_SCOPE = re.compile(r"""scope=["'](module|class|package)["']""")
SHARED_FIXTURE = re.compile(
    r"""@pytest\.fixture\([^)]*scope=["'](?:module|class|package)["'][^)]*\)\s*\ndef (\w+)"""
)


@cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _package_shares_fixtures(directory: str) -> bool:
    return 'scope="package"' in _text(ROOT / directory / "conftest.py")


@cache
def _conftest_shared_fixtures(directory: str) -> frozenset[str]:
    """Module-, class- or package-scoped fixtures of the conftests from the root down."""
    names: set[str] = set()
    parts = directory.split("/") if directory else []
    for depth in range(len(parts) + 1):
        names.update(SHARED_FIXTURE.findall(_text(ROOT.joinpath(*parts[:depth]) / "conftest.py")))
    return frozenset(names)


@cache
def _module_shares_fixtures(module: str) -> bool:
    text = _text(ROOT / module)
    if SHARED_SCOPE.search(text):
        return True
    shared = _conftest_shared_fixtures(module.rpartition("/")[0])
    return any(re.search(rf"\b{name}\b", text) for name in shared)


class SharedFixtureScopes(LoadScopeScheduling):
    """Units of work: packages and modules that share fixtures, otherwise single tests."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        parts = module.split("/")[:-1]
        for depth in range(1, len(parts) + 1):  # the outermost such package wins
            package = "/".join(parts[:depth])
            if _package_shares_fixtures(package):
                return package
        return module if _module_shares_fixtures(module) else nodeid
