"""The words and number forms a compare is told in, shared by the terminal table
(collector.commands) and the reports, so that a CI page and a terminal say the same."""

from __future__ import annotations

from typing import Any, Final

# docs/loop.md "Compare": the test each branch takes, as a reader knows it.
TEST_NAMES: Final = {
    "cochran_mantel_haenszel": "CMH (paired)",
    "wilcoxon_signed_rank": "Wilcoxon (paired)",
    "two_proportion_z": "2-proportion z",
    "mann_whitney_u": "Mann-Whitney U",
}
# A task's change between the sides that a reader wants to see (`same` is not news).
MOVED: Final = ("broken", "fixed", "new", "gone")


def num(value: Any, digits: int = 2) -> str:
    """A figure, or `-` where there is none."""
    return "-" if value is None else f"{value:.{digits}f}"


def test_name(change: dict[str, Any]) -> str:
    """`CMH (paired) over 10 tasks`, `Mann-Whitney U`, or `-`."""
    name = TEST_NAMES.get(change.get("test") or "", "-")
    paired = change.get("paired_tasks")
    return name if paired is None else f"{name} over {paired} tasks"


def moved_tasks(compare: dict[str, Any]) -> list[dict[str, Any]]:
    """The tasks that broke, were fixed, appeared or went, in the API's order (by id)."""
    return [t for t in compare.get("tasks") or [] if t.get("change") in MOVED]


def tally(task: dict[str, Any], side: str) -> str:
    """`2/3`: a side's successes over its runs with a known outcome."""
    return f"{task[f'{side}_successes']}/{task[f'{side}_n']}"


def sides(compare: dict[str, Any]) -> tuple[str, str]:
    """How the two sides are named: their versions (`none` for runs without one)."""
    base, head = compare.get("base") or {}, compare.get("head") or {}
    return str(base.get("version") or "none"), str(head.get("version") or "none")
