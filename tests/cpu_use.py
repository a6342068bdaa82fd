"""CPU seconds per test: what to cut when `make test` runs long on a busy machine.

On a machine another process keeps busy the suite is short of CPU, not of
time to wait (issue 43: the tests' wall times summed to 3 x the run's length
on 3 workers), so `--durations` names the tests that suffered most from the
contention, which is not the same as those that cause it. This plugin counts,
for each test (setup and teardown included), the CPU of the pytest process
and of the child processes it waited for (servers stopped, CLI commands run),
and `--cpu-use=N` prints the N hungriest and the sum. A PostgreSQL cluster is
not a child of the test, so its CPU is not in the figures.

tests/conftest.py loads it; `make check` asks for the top 20. Under pytest-xdist each
worker measures its own tests and the figure travels to the controller with
the test's report.
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from typing import Any

import pytest

START = pytest.StashKey[float]()
PROPERTY = "cpu_s"


def _cpu_s() -> float:
    used = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        used += usage.ru_utime + usage.ru_stime
    return used


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-use",
        type=int,
        default=0,
        metavar="N",
        help="print the N tests that used the most CPU (this process and its children)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[Any]:
    item.stash[START] = _cpu_s()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[Any]:
    if call.when == "teardown" and START in item.stash:
        item.user_properties.append((PROPERTY, round(_cpu_s() - item.stash[START], 3)))
    return (yield)


# The controller's record (pytest_runtest_logreport has no config argument).
_seen_by_controller: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown":
        return
    for name, value in report.user_properties:
        if name == PROPERTY:
            _seen_by_controller[report.nodeid] = float(str(value))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    wanted = int(config.getoption("--cpu-use"))
    if not wanted or not _seen_by_controller:
        return
    ranked = sorted(_seen_by_controller.items(), key=lambda item: item[1], reverse=True)
    write = terminalreporter.write_line
    terminalreporter.section(f"the {wanted} tests that used the most CPU")
    for nodeid, seconds in ranked[:wanted]:
        write(f"{seconds:8.2f}s cpu  {nodeid}")
    write(f"{sum(_seen_by_controller.values()):8.0f}s cpu in all, {len(ranked)} tests")
