"""Hunt flaky tests: run the timing-sensitive ones many times on a busy machine.

`make flake` (FLAKE_RUNS=N): the tests marked `timing` (pyproject.toml) run N
times, each time in a fresh pytest process, while one process per core spins
on the CPU, so that every thread and child process of the suite competes for
the cores as it does when CI shares the machine with other work. It prints, per
test, how many runs failed and the first line of the first failure, and exits
1 if any did. It is not part of `make test`: it takes minutes per run.

    python scripts/flake_hunt.py --runs 20
    python scripts/flake_hunt.py --runs 5 -- -k storage_locks   # extra pytest args
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPIN = "while True: pass"


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes that each keep a core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


def stop_hogs(hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait(10)


def outcomes(report: Path) -> tuple[list[str], dict[str, str]]:
    """Every test a JUnit report names, and the failed ones with their first message line."""
    seen: list[str] = []
    failed: dict[str, str] = {}
    if not report.exists():
        return seen, failed
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        seen.append(name)
        for kind in ("failure", "error"):
            found = case.find(kind)
            if found is not None:
                message = (found.get("message") or found.text or kind).strip()
                failed[name] = f"{kind}: {message.splitlines()[0] if message else kind}"
    return seen, failed


def one_run(number: int, marker: str, extra: list[str], folder: Path) -> tuple[int, Path]:
    report = folder / f"run-{number}.xml"
    command = [sys.executable, "-m", "pytest", "-m", marker, "-p", "no:cacheprovider"]
    command += [f"--junitxml={report}", *extra]
    log = folder / f"run-{number}.log"
    with log.open("w") as sink:
        code = subprocess.run(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT).returncode
    return code, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="times to run the tests (20)")
    parser.add_argument("--marker", default="timing", help="the pytest marker to select")
    parser.add_argument(
        "--hogs", type=int, default=os.cpu_count() or 2, help="spinning processes (one a core)"
    )
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="flake-hunt-"))
    failures: Counter[str] = Counter()
    first_seen: dict[str, str] = {}
    ran: Counter[str] = Counter()
    broken_runs = 0
    hogs = start_hogs(args.hogs)
    started = time.monotonic()
    try:
        for number in range(1, args.runs + 1):
            code, report = one_run(number, args.marker, args.pytest_args, folder)
            seen, failed = outcomes(report)
            ran.update(seen)
            failures.update(failed)
            for name, message in failed.items():
                first_seen.setdefault(name, f"run {number}: {message}")
            if code not in (0, 1) or not seen:  # no report, or pytest itself failed
                broken_runs += 1
            elapsed = time.monotonic() - started
            print(
                f"run {number}/{args.runs}: {len(seen)} tests, {len(failed)} failed "
                f"(exit {code}, {elapsed:.0f} s so far)",
                flush=True,
            )
    finally:
        stop_hogs(hogs)
    print(f"\n{len(ran)} tests, {args.runs} runs beside {args.hogs} CPU hogs; logs in {folder}")
    if not failures and not broken_runs:
        print("no failures")
        return 0
    for name, count in failures.most_common():
        print(f"{count:3d}/{ran[name]:<3d} {name}\n        first: {first_seen[name][:300]}")
    if broken_runs:
        print(f"{broken_runs} run(s) ended without a report or with a pytest error: see the logs")
    return 1


if __name__ == "__main__":
    sys.exit(main())
