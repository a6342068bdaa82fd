"""Where a report goes: a file, standard output (`-`), or GitHub's step summary.

A report path is checked before the screening starts (a CI job should not
screen for ten minutes to fail on a typo in a path), its folder made when
missing, as CI steps write `reports/junit.xml` into a fresh checkout. The
step summary ($GITHUB_STEP_SUMMARY) is appended to, never overwritten:
GitHub gives each step one file, and other commands of the same step may
have written theirs already.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

STDOUT: Final = "-"
STEP_SUMMARY: Final = "GITHUB_STEP_SUMMARY"


class ReportNotWritten(Exception):
    """A report could not be written (the message names the file and why)."""


def check_path(flag: str, target: str | None) -> str | None:
    """What is wrong with writing a report to `target`, or None; makes its folder."""
    if target is None or target == STDOUT:
        return None
    path = Path(target).expanduser()
    if path.is_dir():
        return f"{flag} {target}: is a folder, not a file"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{flag} {target}: cannot make its folder: {exc.strerror or exc}"
    writable = os.access(path, os.W_OK) if path.exists() else os.access(path.parent, os.W_OK)
    return None if writable else f"{flag} {target}: not writable"


def step_summary(environ: Mapping[str, str] | None = None) -> str | None:
    """GitHub Actions' step summary file, when the command runs in a step."""
    return (environ if environ is not None else os.environ).get(STEP_SUMMARY) or None


def write_report(target: str, text: str, *, append: bool = False) -> None:
    """`text` to the file (replaced, or appended to), or to standard output for `-`."""
    if target == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(target).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a" if append else "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
    except OSError as exc:
        raise ReportNotWritten(f"cannot write {target}: {exc.strerror or exc}") from None


def same_file(target: str, other: str | None) -> bool:
    """Whether two report paths name one file (`--markdown "$GITHUB_STEP_SUMMARY"`)."""
    if other is None or target == STDOUT:
        return False
    return Path(target).expanduser().resolve() == Path(other).expanduser().resolve()
