"""How often compare flags an agent: false alarms on unchanged agents, and
detection of real changes, for compare's statistics of revision 1 and
revision 2 side by side (docs/loop.md "How many tasks and rounds").

    python bench/compare_power.py [--sims 1000] [--seed 7] [--spread all]
    python bench/compare_power.py --min-effect-only   # what a min_effect costs (~30 s)

Each simulated compare screens an agent twice with the same suite. A suite
is made of tasks that differ as real ones do: each task has its own pass
rate (most always pass, some are hard, some flaky, a few always fail), its
own typical latency (300 ms to 6 s), cost (0.001 to 0.05 USD) and step
count (0 to 6); each run varies around its task's figures (latency by a
log-normal factor of spread 0.12, 0.2 or 0.35, cost by 0.25, steps by one
now and then). The head side is either the same agent or one with one real
change: every task 25% slower, 30% costlier, one more step, one
always-passing task turned flaky (1.0 -> 0.5), or, the hard case, two
always-passing tasks of ten broken (pass rate 1.0 -> 0.3), at 3 to 20 rounds.
A side keeps its latest 100 runs (the radar's cohort), so 10 tasks x 20
rounds is judged on its last 10 rounds.

A compare "flags" when it says `regressed` on any axis. Revision 1 is
rebuilt here from the scoring core's unpaired tests exactly as it ran
before (every axis unpaired at alpha 0.05, robustness by a 10-point drop);
revision 2 is `scoring.compare` as shipped.

Figures printed: the share of compares flagged per situation and suite
size, with the axes that flagged; the targets of the release-gate issue
are marked (unchanged <= 5% everywhere; 25% slower >= 60% at 10 x 3 and
>= 85% at 20 x 3). Last, the share flagged at each `min_effect` (axis
points a significant change must also move by; docs/loop.md "Small
changes"), from which that page's suggested threshold comes.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scoring  # noqa: E402
from scoring.radar import radar, radar_cohort  # noqa: E402
from scoring.stats import mann_whitney, two_proportions  # noqa: E402

START = datetime(2026, 11, 1, tzinfo=UTC)
# The pass rates tasks are drawn from, with their shares of a suite.
PASS_RATES = ((1.0, 0.50), (0.9, 0.20), (0.6, 0.15), (0.2, 0.10), (0.0, 0.05))
# Run-to-run latency spread within a task (sigma of a log-normal factor): 0.12
# is an agent whose runs of one task take nearly the same time, 0.35 one whose
# runs of a task often differ by half (a retried tool, a longer answer).
SPREADS = {"narrow": 0.12, "typical": 0.2, "wide": 0.35}


@dataclass(frozen=True)
class Task:
    pass_rate: float
    latency_ms: float
    cost_usd: float
    steps: int


@dataclass(frozen=True)
class Change:
    """What differs on the head side (the identity for an unchanged agent)."""

    name: str
    alter: Callable[[list[Task], random.Random], list[Task]]


def unchanged(tasks: list[Task], _: random.Random) -> list[Task]:
    return tasks


def slower_by(factor: float) -> Callable[[list[Task], random.Random], list[Task]]:
    def slower(tasks: list[Task], _: random.Random) -> list[Task]:
        return [Task(t.pass_rate, t.latency_ms * factor, t.cost_usd, t.steps) for t in tasks]

    return slower


def costlier(tasks: list[Task], _: random.Random) -> list[Task]:
    return [Task(t.pass_rate, t.latency_ms, t.cost_usd * 1.30, t.steps) for t in tasks]


def one_more_step(tasks: list[Task], _: random.Random) -> list[Task]:
    return [Task(t.pass_rate, t.latency_ms, t.cost_usd, t.steps + 1) for t in tasks]


def _retuned(tasks: list[Task], count: int, rate: float) -> list[Task]:
    """`count` of the most reliable tasks (always passing first) now pass at `rate`."""
    order = sorted(range(len(tasks)), key=lambda i: (-tasks[i].pass_rate, i))[:count]
    return [
        Task(rate, t.latency_ms, t.cost_usd, t.steps) if i in order else t
        for i, t in enumerate(tasks)
    ]


def two_broken(tasks: list[Task], _: random.Random) -> list[Task]:
    return _retuned(tasks, 2, 0.3)


def one_flaky(tasks: list[Task], _: random.Random) -> list[Task]:
    return _retuned(tasks, 1, 0.5)


CHANGES = {
    "unchanged": Change("unchanged", unchanged),
    "25% slower": Change("25% slower", slower_by(1.25)),
    "30% costlier": Change("30% costlier", costlier),
    "one more step": Change("one more step", one_more_step),
    "1 task flaky": Change("1 task flaky", one_flaky),
}
BROKEN = Change("2 of 10 tasks broken", two_broken)
SIZES = ((5, 5), (10, 3), (20, 3), (10, 10), (30, 5))
BROKEN_ROUNDS = (3, 5, 10, 20)  # the hard case at 10 tasks: how many rounds it takes
# How many tasks and rounds a slowdown of a given size needs (typical spread).
SLOWDOWNS = (1.10, 1.25, 1.50)
SIZING = ((5, 5), (10, 3), (10, 5), (10, 10), (20, 3), (20, 5), (30, 3))


def suite(count: int, rnd: random.Random) -> list[Task]:
    rates, weights = zip(*PASS_RATES, strict=True)
    return [
        Task(
            rnd.choices(rates, weights)[0],
            math.exp(rnd.uniform(math.log(300), math.log(6000))),
            math.exp(rnd.uniform(math.log(0.001), math.log(0.05))),
            rnd.randint(0, 6),
        )
        for _ in range(count)
    ]


def screen(
    tasks: Sequence[Task], rounds: int, side: str, spread: float, rnd: random.Random, t0: int
) -> list[scoring.RunRecord]:
    """One screening: every task once per round, rounds in order."""
    runs = []
    for _ in range(rounds):
        for k, task in enumerate(tasks):
            n = len(runs)
            runs.append(
                scoring.RunRecord(
                    id=f"{side}{n:05d}",
                    status="completed",
                    success=rnd.random() < task.pass_rate,
                    latency_ms=task.latency_ms * math.exp(rnd.gauss(0.0, spread)),
                    cost_usd=task.cost_usd * math.exp(rnd.gauss(0.0, 0.25)),
                    steps=max(0, task.steps + rnd.choice((-1, 0, 0, 0, 0, 0, 1))),
                    task_id=f"task-{k:02d}",
                    ended_at=START + timedelta(seconds=t0 + n),
                )
            )
    return runs


def revision_1(base: list[scoring.RunRecord], head: list[scoring.RunRecord]) -> set[str]:
    """The axes revision 1 flagged: unpaired tests on each side's cohort at 0.05
    each, and robustness regressed on a drop of 10 points or more."""
    before, after = radar_cohort(base), radar_cohort(head)
    flagged = set()
    b_known = [r.success for r in before if r.success is not None]
    h_known = [r.success for r in after if r.success is not None]
    test = two_proportions(sum(b_known), len(b_known), sum(h_known), len(h_known))
    if test is not None and test.p_value < 0.05 and test.z < 0:
        flagged.add("correctness")
    figures: dict[str, Callable[[scoring.RunRecord], float | None]] = {
        "latency": lambda r: r.latency_ms,
        "cost": lambda r: r.cost_usd,
        "tool_efficiency": lambda r: None if r.steps is None else float(r.steps),
    }
    for axis, figure in figures.items():
        b = [v for r in before if (v := figure(r)) is not None]
        h = [v for r in after if (v := figure(r)) is not None]
        test = mann_whitney(b, h)
        if test is not None and test.p_value < 0.05 and test.z > 0:
            flagged.add(axis)
    b_rob, h_rob = radar(before).robustness, radar(after).robustness
    if b_rob is not None and h_rob is not None and h_rob - b_rob <= -10.0:
        flagged.add("robustness")
    return flagged


def revision_2(base: list[scoring.RunRecord], head: list[scoring.RunRecord]) -> set[str]:
    result = scoring.compare(base, head)
    return {axis for axis, change in result.axes.items() if change.verdict == "regressed"}


@dataclass
class Tally:
    sims: int = 0
    flagged_1: int = 0
    flagged_2: int = 0
    axes_1: Counter[str] | None = None
    axes_2: Counter[str] | None = None

    def add(self, first: set[str], second: set[str]) -> None:
        self.sims += 1
        self.flagged_1 += bool(first)
        self.flagged_2 += bool(second)
        self.axes_1 = (self.axes_1 or Counter()) + Counter(first)
        self.axes_2 = (self.axes_2 or Counter()) + Counter(second)


def simulate(
    change: Change, tasks: int, rounds: int, spread: float, sims: int, rnd: random.Random
) -> Tally:
    tally = Tally()
    for _ in range(sims):
        agent = suite(tasks, rnd)
        base = screen(agent, rounds, "b", spread, rnd, 0)
        head = screen(change.alter(agent, rnd), rounds, "h", spread, rnd, 10**6)
        tally.add(revision_1(base, head), revision_2(base, head))
    return tally


def share(count: int, sims: int) -> str:
    return f"{100.0 * count / sims:5.1f}%"


def top_axes(axes: Counter[str] | None, sims: int) -> str:
    if not axes:
        return "-"
    return ", ".join(f"{axis} {100.0 * n / sims:.0f}%" for axis, n in axes.most_common(2))


TARGETS = {
    ("unchanged", 0, 0): "<= 5%",
    ("25% slower", 10, 3): ">= 60%",
    ("25% slower", 20, 3): ">= 85%",
}


def header(title: str) -> None:
    print(f"\n## {title}\n")
    print(
        "| situation | tasks x rounds | rev. 1 flagged | rev. 2 flagged | rev. 1 axes "
        "| rev. 2 axes | target |"
    )
    print("|---|---|---|---|---|---|---|")


def report(name: str, tasks: int, rounds: int, tally: Tally) -> None:
    target = TARGETS.get((name, tasks, rounds)) or TARGETS.get((name, 0, 0), "")
    print(
        f"| {name} | {tasks} x {rounds} | {share(tally.flagged_1, tally.sims)} "
        f"| {share(tally.flagged_2, tally.sims)} | {top_axes(tally.axes_1, tally.sims)} "
        f"| {top_axes(tally.axes_2, tally.sims)} | {target} |",
        flush=True,
    )


# The thresholds the min_effect table tries, in axis points (docs/loop.md "Small changes").
MIN_EFFECTS = (0.0, 0.5, 1.0, 2.0, 5.0)
MIN_EFFECT_SIZES = ((10, 3), (20, 3))


def min_effect_table(sims: int, rnd: random.Random) -> None:
    """Share flagged at each min_effect, from one compare per simulation: a
    verdict is `regressed` at threshold m exactly when it is at 0 and its
    |delta| >= m, so every threshold is read off the same compares. Also the
    median |delta| of the axis that flagged, to show what a change moves."""
    spread = SPREADS["typical"]
    print(f"\n## Regressed at each min_effect (axis points), latency spread {spread}\n")
    thresholds = " | ".join(f"min_effect {m:g}" for m in MIN_EFFECTS)
    print(f"| situation | tasks x rounds | {thresholds} | median abs(delta) flagged |")
    print("|---|---|" + "---|" * (len(MIN_EFFECTS) + 1))
    for change in (*CHANGES.values(), BROKEN):
        for tasks, rounds in MIN_EFFECT_SIZES:
            flagged = Counter[float]()
            moved: list[float] = []
            for _ in range(sims):
                agent = suite(tasks, rnd)
                base = screen(agent, rounds, "b", spread, rnd, 0)
                head = screen(change.alter(agent, rnd), rounds, "h", spread, rnd, 10**6)
                deltas = [
                    abs(c.delta or 0.0)
                    for c in scoring.compare(base, head).axes.values()
                    if c.verdict == "regressed"
                ]
                moved.extend(deltas)
                for least in MIN_EFFECTS:
                    flagged[least] += any(d >= least for d in deltas)
            cells = " | ".join(share(flagged[m], sims) for m in MIN_EFFECTS)
            middle = f"{sorted(moved)[len(moved) // 2]:.2f}" if moved else "-"
            print(f"| {change.name} | {tasks} x {rounds} | {cells} | {middle} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=1000, help="compares per cell")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--spread", choices=(*SPREADS, "all"), default="all")
    parser.add_argument(
        "--min-effect-only", action="store_true", help="print only the min_effect table"
    )
    args = parser.parse_args()
    if args.min_effect_only:
        min_effect_table(args.sims, random.Random(args.seed))
        return
    spreads = list(SPREADS) if args.spread == "all" else [args.spread]
    began = time.perf_counter()
    rnd = random.Random(args.seed)
    typical = SPREADS["typical"]
    header(f"Every situation, latency spread {typical} (typical), {args.sims} compares a cell")
    for name, change in CHANGES.items():
        for tasks, rounds in SIZES:
            report(name, tasks, rounds, simulate(change, tasks, rounds, typical, args.sims, rnd))
    for rounds in BROKEN_ROUNDS:
        report(BROKEN.name, 10, rounds, simulate(BROKEN, 10, rounds, typical, args.sims, rnd))
    for spread_name in (name for name in spreads if name != "typical"):
        spread = SPREADS[spread_name]
        header(f"Unchanged and 25% slower, latency spread {spread} ({spread_name})")
        for name in ("unchanged", "25% slower"):
            for tasks, rounds in SIZES:
                tally = simulate(CHANGES[name], tasks, rounds, spread, args.sims, rnd)
                report(name, tasks, rounds, tally)
    header(f"How many tasks and rounds a slowdown needs, latency spread {typical}")
    for factor in SLOWDOWNS:
        change = Change(f"{round(100 * (factor - 1))}% slower", slower_by(factor))
        for tasks, rounds in SIZING:
            report(
                change.name, tasks, rounds, simulate(change, tasks, rounds, typical, args.sims, rnd)
            )
    min_effect_table(args.sims, rnd)
    print(f"\n{time.perf_counter() - began:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
