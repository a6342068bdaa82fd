"""Ingest while retention deletes: the rate during a pass, and the store's size
at a steady state.

    python bench/retention.py [--store sqlite|postgresql] [--spans 1000000] [--cycles 5]

1. Baseline: one collector with the default retention stores `--spans` new
   spans (OTLP/gRPC, 4 senders); its rate is the reference.
2. A pass: the collector restarts with a retention age of one second, so
   its first sweep deletes every span stored in step 1 (`--spans` of them)
   while the same number of new spans arrive; the rate of that round over the
   reference is the figure (target: at least 0.8).
3. Steady state, on a new database: rounds of `--spans / 4` spans with a
   retention age of `--age` seconds and a pass every 5 s, so once the age
   has passed deletes match inserts. After each of `--cycles` rounds past
   the first age: the store's size (the SQLite file with its WAL;
   PostgreSQL's tables with their indexes and TOAST), and what of it the live
   rows use (SQLite: the file less its free pages; PostgreSQL: less the
   free space of the tables, as pgstattuple would say, approximated by the
   dead-row share).

Every round checks that every acknowledged span of the current round is
stored.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import drive  # noqa: E402
from bench.payloads import build_requests  # noqa: E402
from bench.support.postgres import PostgresCluster  # noqa: E402
from bench.support.servers import cli, start_server  # noqa: E402

PER_REQUEST = 512
TABLES = ("spans", "traces", "resources", "runs", "run_deltas", "run_totals")
_TOTAL_SIZE = (
    "SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY["
    + ", ".join(f"'{t}'" for t in TABLES)
    + "]::regclass[]) c"
)


def size_of(url: str, path: Path | None) -> tuple[int, int]:
    """(bytes the store takes, bytes of it the live rows use): the SQLite
    file with its WAL and its free pages; PostgreSQL's tables (indexes and
    TOAST included) and their share of dead rows."""
    engine = create_engine(url)
    with engine.connect() as conn:
        if path is not None:
            size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
            free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
            page = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
            engine.dispose()
            return size, size - int(free) * int(page)
        size = conn.execute(text(_TOTAL_SIZE)).scalar_one()
        live, dead = conn.execute(
            text(
                "SELECT sum(n_live_tup), sum(n_dead_tup) FROM pg_stat_user_tables "
                "WHERE relname = ANY(:names)"
            ),
            {"names": list(TABLES)},
        ).one()
    engine.dispose()
    share = float(live or 0) / max(float((live or 0) + (dead or 0)), 1.0)
    return int(size), int(int(size) * share)


def compacted_size(url: str, path: Path | None) -> int:
    """What the same rows take compacted: SQLite's `VACUUM INTO` a new file;
    PostgreSQL's tables after VACUUM FULL (run with the collector stopped)."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        if path is not None:
            copy = path.with_name("compacted.db")
            copy.unlink(missing_ok=True)
            conn.exec_driver_sql(f"VACUUM INTO '{copy}'")
            size = copy.stat().st_size
            copy.unlink()
        else:
            for table in TABLES:
                conn.exec_driver_sql(f"VACUUM FULL {table}")
            size = int(conn.execute(text(_TOTAL_SIZE)).scalar_one())
    engine.dispose()
    return size


def relation_sizes(url: str) -> str:
    """PostgreSQL: where the bytes are, per table: heap, TOAST, indexes (MB)."""
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT c.relname, pg_relation_size(c.oid), "
                "coalesce(pg_total_relation_size(c.reltoastrelid), 0), pg_indexes_size(c.oid) "
                "FROM pg_class c WHERE c.relname = ANY(:names) ORDER BY c.relname"
            ),
            {"names": list(TABLES)},
        ).all()
    engine.dispose()
    return "; ".join(
        f"{name} {heap / 1e6:,.0f}+{toast / 1e6:,.0f}+{index / 1e6:,.0f}"
        for name, heap, toast, index in rows
        if heap + toast + index > 5e6
    )


def stored(url: str) -> tuple[int, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        spans = conn.execute(text("SELECT count(*) FROM spans")).scalar_one()
        payload = conn.execute(
            text("SELECT coalesce(sum(length(encoded)), 0) FROM spans")
        ).scalar_one()
    engine.dispose()
    return int(spans), int(payload)


def round_of(url: str, key: str, count: int, seed: int, *flags: str) -> tuple[float, int]:
    """Spans/s of one round through a fresh collector process, and the spans
    stored after it."""
    bodies = build_requests(count // PER_REQUEST, seed=seed)
    server = start_server(url, *flags)
    try:
        elapsed, _ = drive("grpc", [server], key, bodies)
        time.sleep(3)  # the last sweeps: retention steps behind the exports
    finally:
        server.stop()
    return len(bodies) * PER_REQUEST / elapsed, stored(url)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--age", type=float, default=60.0, help="steady state: retention age, s")
    parser.add_argument("--steady-only", action="store_true", help="only step 3")
    args = parser.parse_args()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        path: Path | None = tmp / "retention.db"
        url = f"sqlite:///{path}"
        if args.store == "postgresql":
            url = stack.enter_context(PostgresCluster(durable=True)).create_database()
            path = None
        print(f"{args.store}: rounds of OTLP/gRPC exports, 4 senders, 512 spans a request")
        if args.steady_only:
            steady(args, stack, tmp)
            return
        cli("db", "upgrade", "--database-url", url)  # keys create makes no database
        key = cli("keys", "create", "--owner", "bench", "--database-url", url).stdout.strip()
        reference, held = round_of(url, key, args.spans, 1)
        print(f"  reference: {reference:,.0f} spans/s storing {held:,} spans (no retention due)")
        time.sleep(1.5)  # all of them older than the one-second age below
        during, held = round_of(url, key, args.spans, 2, "--span-retention-days", str(1 / 86400))
        print(
            f"  during a pass deleting {args.spans:,} spans: {during:,.0f} spans/s "
            f"= {during / reference:.2f} of the reference; {held:,} spans left"
        )
        steady(args, stack, tmp)


def steady(args: argparse.Namespace, stack: ExitStack, tmp: Path) -> None:
    """Rounds on a new database until deletes match inserts, then `--cycles` more."""
    path: Path | None = tmp / "steady.db"
    url = f"sqlite:///{path}"
    if args.store == "postgresql":
        url = stack.enter_context(PostgresCluster(durable=True)).create_database()
        path = None
    cli("db", "upgrade", "--database-url", url)  # keys create makes no database
    key = cli("keys", "create", "--owner", "bench", "--database-url", url).stdout.strip()
    flags = ("--span-retention-days", str(args.age / 86400), "--retention-interval", "5")
    print(f"  steady state: rounds of {args.spans // 4:,} spans, retention age {args.age:.0f} s")
    started, cycle, seed = time.time(), 0, 100
    while cycle < args.cycles:
        seed += 1
        rate, _ = round_of(url, key, args.spans // 4, seed, *flags)
        if time.time() - started < 1.5 * args.age:
            continue  # still filling up to the age
        cycle += 1
        spans, payload = stored(url)
        size, used = size_of(url, path)
        print(
            f"  cycle {cycle}: {rate:,.0f} spans/s; {spans:,} spans live "
            f"({payload / 1e6:,.0f} MB encoded); store {size / 1e6:,.0f} MB, "
            f"{used / 1e6:,.0f} MB of it in use: {size / max(used, 1):.2f}x"
        )
        if path is None:
            print(f"    MB, heap+TOAST+indexes: {relation_sizes(url)}")
    compacted = compacted_size(url, path)
    print(
        f"  the same rows compacted: {compacted / 1e6:,.0f} MB; the last cycle's store is "
        f"{size / max(compacted, 1):.2f}x that"
    )


if __name__ == "__main__":
    os.environ.setdefault("BADGE_LOG_LEVEL", "WARNING")
    main()
