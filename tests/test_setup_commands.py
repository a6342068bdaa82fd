"""`make run` and `make test` are a newcomer's two set-up commands (README
"Two commands"): `make run` installs what running needs, `make test` adds
the test and lint tools (and PostgreSQL and Chromium); and the README's
commands work as written after `make run`, whose `.venv` is not on PATH."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def planned(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run on a fresh clone (`make -n`)."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_run_installs_what_running_needs_and_make_test_adds_the_rest(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "fresh-venv"
    run = [line for line in planned("run", venv) if "pip install" in line]
    assert run[-1].endswith("pip install --quiet -e .")  # no [dev]: no pytest, ruff, mypy...
    assert not any("[dev]" in line for line in run)
    test = planned("test", venv)
    assert any(line.endswith("pip install --quiet -e '.[dev]'") for line in test)
    assert "./scripts/ensure-postgres" in test and "./scripts/ensure-chromium" in test
    assert not any("[dev]" in line for line in planned("demo", venv))


def code_lines() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    return [line.strip() for block in blocks for line in block.splitlines()]


def test_the_readme_says_how_to_reach_badge_collector_before_its_first_bare_command() -> None:
    first_bare = min(
        README.index(line) for line in code_lines() if re.search(r"(^|\$\()badge-collector ", line)
    )
    activate = README.find(". .venv/bin/activate")
    assert 0 <= activate < first_bare
    assert "`.venv/bin/badge-collector`" in README[:first_bare]


def test_the_readme_says_what_make_test_installs_and_whose_key_diagnose_needs() -> None:
    assert "needs nothing outside the" not in README
    for installer in ("scripts/ensure-postgres", "scripts/ensure-chromium"):
        assert installer in README
    assert "so `KEY` must be a key of the agent's owner" in README
    assert "(about 10 s)" not in README
