"""The crash matrix: SIGKILL a collector at random points of its work, restart, check.

    python bench/crash.py [--trials 20] [--store sqlite|postgresql] [--seed N]
                          [--kinds load,retention,migration,grade]

Runs `--trials` trials, cycling through the kinds (bench/support/crashes.py:
during load on both doors, during a retention pass, during `db upgrade` from
revision 0008, during grade writes), each on a fresh database (PostgreSQL: a
throwaway durable cluster, one database per trial). Prints one line per
trial and the totals: acknowledged spans and grades, how many were lost,
seconds until every trace's runs matched its stored spans after the restart,
SQLite's integrity check. Exits 1 if any trial failed.
"""

from __future__ import annotations

import argparse
import random
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import fresh_databases  # noqa: E402
from bench.support.crashes import KINDS, Trial, run_trial  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rnd = random.Random(seed)
    kinds = args.kinds.split(",")
    trials: list[Trial] = []
    print(f"{args.store}, seed {seed}, {args.trials} trials")
    with ExitStack() as stack:
        databases = fresh_databases(args.store, None, stack)
        for index in range(args.trials):
            kind = kinds[index % len(kinds)]
            url = databases()
            trial = run_trial(kind, url, rnd)
            trials.append(trial)
            settled = trial.runs_consistent_after_s
            runs = "NOT within 20 s" if settled is None else f"after {settled:.2f} s"
            print(
                f"{index + 1:3} {kind:10} killed at {trial.killed_after_s:4.2f} s: "
                f"acked {trial.acked_spans:,} spans / {trial.acked_grades:,} grades, "
                f"lost {trial.lost_spans} / {trial.lost_grades}; runs consistent "
                f"{runs}; "
                f"integrity {trial.integrity}; restart {'ok' if trial.restarted else 'FAILED'}"
                + (f"; {', '.join(trial.notes)}" if trial.notes else "")
            )
    failed = [t for t in trials if not t.passed]
    worst = max((t.runs_consistent_after_s or 0.0) for t in trials)
    print(
        f"{len(trials) - len(failed)}/{len(trials)} trials passed: "
        f"{sum(t.acked_spans for t in trials):,} acknowledged spans, "
        f"{sum(t.lost_spans for t in trials)} lost; "
        f"{sum(t.acked_grades for t in trials):,} acknowledged grades, "
        f"{sum(t.lost_grades for t in trials)} lost; runs consistent at most {worst:.2f} s "
        "after restart"
    )
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
