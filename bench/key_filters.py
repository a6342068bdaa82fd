"""What the SQLite writer's key filters cost at start (storage/sqlite/key_filter.py).

    python bench/key_filters.py [--keys 600000] [--rounds 3]

Fills a fresh SQLite file with that many traces and as many runs (random
ids, merged into their indexes as a sweeper leaves them), then times the
warm-up `serve` does before it opens its doors: every stored trace id and
run id read from the key indexes into the filters. Prints the median of
the rounds, per million keys, and the filters' share of keys never stored
that they take for stored (each such key costs one index lookup).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.runs import a_run  # noqa: E402
from collector.storage.engine import open_database  # noqa: E402
from collector.storage.migrate import create_schema  # noqa: E402
from collector.storage.rows import RUN_COLUMNS  # noqa: E402
from collector.storage.sqlite.key_tail import RecentKeys  # noqa: E402


def fill(path: Path, count: int) -> None:
    db = open_database(f"sqlite:///{path}", synchronous="OFF")
    create_schema(db)
    db.dispose()
    raw = sqlite3.connect(path)
    names = ", ".join(RUN_COLUMNS)
    marks = ", ".join("?" * len(RUN_COLUMNS))
    template = a_run(random.Random(1), 1)._replace(owner="bench")
    for start in range(0, count, 100_000):
        traces, runs = [], []
        for _ in range(start, min(count, start + 100_000)):
            trace_id = uuid.uuid4().hex
            traces.append(("bench", trace_id, 1.0))
            runs.append(tuple(template._replace(id=str(uuid.uuid4()), trace_id=trace_id)))
        raw.executemany(
            "INSERT INTO traces (owner, trace_id, touched_at, merged) VALUES (?, ?, ?, 1)", traces
        )
        raw.executemany(f"INSERT INTO runs ({names}, merged) VALUES ({marks}, 1)", runs)
        raw.commit()
    raw.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=600_000, help="traces, and as many runs")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "keys.db"
        fill(path, args.keys)
        db = open_database(f"sqlite:///{path}")
        times, wrong = [], []
        for _ in range(args.rounds):
            keys = RecentKeys()
            started = time.perf_counter()
            with db.reader.begin() as conn:
                keys.warm(conn)
            times.append(time.perf_counter() - started)
            never = [str(uuid.uuid4()) for _ in range(100_000)]
            filled = keys._run_keys.filter  # noqa: SLF001 - a benchmark looks inside
            wrong.append(sum(run_id in filled for run_id in never) / len(never))
        db.dispose()
    median = statistics.median(times)
    print(
        f"{args.keys:,} traces and {args.keys:,} runs: warm-up median {median:.2f} s "
        f"({median / (2 * args.keys) * 1e6:.2f} s per million keys; rounds: "
        f"{', '.join(f'{t:.2f}' for t in times)}); new run ids taken for stored: "
        f"{statistics.median(wrong):.2%}"
    )


if __name__ == "__main__":
    main()
