"""The kept run sums (run_totals + run_deltas, migration 0009) always equal a
scan of `runs`, whatever writes them: inserts, upserts that change a run,
the grade update, deletes, the PostgreSQL placeholder rows, and folds."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from api.ports import RunFilter
from bench.support.runs import a_run
from collector.storage import kept_totals
from collector.storage.engine import Database, open_database
from collector.storage.grades import save_grades
from collector.storage.migrate import create_schema, upgrade
from collector.storage.rows import RUN_COLUMNS, GradeRow, RunRow
from collector.storage.tables import runs

SCANNED = text(
    "SELECT agent_id, status, cost_source, count(*), "
    "sum(CASE WHEN success THEN 1 ELSE 0 END), sum(latency_ms), count(latency_ms), "
    "sum(COALESCE(cost_usd, 0)) FROM runs GROUP BY agent_id, status, cost_source"
)


def kept_equals_scan(db: Database) -> None:
    with db.reading() as session:
        scanned = {
            (r[0], r[1], r[2]): (int(r[3]), int(r[4]), float(r[5] or 0), int(r[6]), float(r[7]))
            for r in session.execute(SCANNED)
        }
        kept = {
            (r[0], r[1], r[2]): (int(r[3]), int(r[4]), float(r[5] or 0), int(r[6]), float(r[7]))
            for r in kept_totals.totals_rows(session.conn, None, RunFilter())
        }
        graded = dict(kept_totals.graded_rows(session.conn, None, RunFilter()))
        counted = session.execute(
            text(
                "SELECT agent_id, count(*) FROM runs WHERE status = 'completed' "
                "AND success_source = 'graded' GROUP BY agent_id"
            )
        )
        graded_scan = {agent: int(count) for agent, count in counted}
    assert kept.keys() == scanned.keys()
    for key, sums in scanned.items():
        assert kept[key][:2] == sums[:2] and kept[key][3] == sums[3], key
        assert kept[key][2] == pytest.approx(sums[2], rel=1e-9, abs=1e-6), key
        assert kept[key][4] == pytest.approx(sums[4], rel=1e-9, abs=1e-9), key
    assert {a: g for a, g in graded.items() if g} == graded_scan


def test_the_kept_sums_follow_every_kind_of_run_write(database_url: str) -> None:
    db = open_database(database_url)
    create_schema(db)
    rnd = random.Random(7)
    rows: dict[str, RunRow] = {}
    try:
        for step in range(12):
            with db.writing() as session:
                fresh = [a_run(rnd, rnd.randint(0, 60)) for _ in range(25)]
                batch = {row.id: row for row in fresh}  # one upsert may not write a key twice
                session.upsert_runs(runs, RUN_COLUMNS, sorted(batch.values()))
                rows.update(batch)
                if step % 3 == 1:  # the grade update
                    graded = rnd.sample(sorted(rows), 5)
                    save_grades(
                        session,
                        [
                            GradeRow(
                                i, "o", "a", "k", rnd.random() < 0.5, None, None, None, None, 1.0
                            )
                            for i in graded
                        ],
                    )
                if step % 4 == 2:  # stale runs dropped by a recomputation
                    gone = rnd.sample(sorted(rows), 4)
                    session.delete_runs(gone)
                    for run_id in gone:
                        del rows[run_id]
                # PostgreSQL's placeholders count nothing
                session.hold_runs(["run-9998", "run-9999"])
            kept_equals_scan(db)
            if step % 2:
                with db.writing() as session:
                    session.fold_run_deltas()
                kept_equals_scan(db)
        with db.writing() as session:
            while session.fold_run_deltas():
                pass
        with db.reading() as session:
            assert session.execute(text("SELECT count(*) FROM run_deltas")).scalar() == 0
        kept_equals_scan(db)
    finally:
        db.dispose()


def test_the_migration_sums_the_runs_a_database_already_holds(empty_database_url: str) -> None:
    db = open_database(empty_database_url)
    upgrade(db, "0008")
    rnd = random.Random(11)
    try:
        with db.writer.begin() as conn:  # the schema of 0008: no key tail yet
            session = db.session(conn)
            fresh = {row.id: row for row in (a_run(rnd, i) for i in range(80))}
            # the columns of 0008's runs table (screenings came in 0016, claims in
            # 0022, conventions in 0023, steps_source in 0024)
            later = {"screening_id", "screening_round", "suite_name", "suite_digest"}
            later |= {"grader_claim", "unrecognised_spans", "conventions_digest"}
            later |= {"steps_source"}
            old_columns = [c for c in RUN_COLUMNS if c not in later]
            old_rows = [
                tuple(getattr(row, c) for c in old_columns) for row in sorted(fresh.values())
            ]
            session.upsert_rows(runs, old_columns, old_rows, key=("id",))
        create_schema(db)  # to the newest: 0009 sums them
        with db.reading() as session:
            assert session.execute(text("SELECT count(*) FROM run_deltas")).scalar() == 0
            assert session.execute(text("SELECT sum(runs) FROM run_totals")).scalar() == 80
        kept_equals_scan(db)
    finally:
        db.dispose()
