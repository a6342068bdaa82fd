"""Waiting grades in SQL (storage.grade_waits): the upgrade counts the ones
already stored, the aging pass goes in bounded steps through its index, and a
grade whose run is stored is never aged out."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection

from collector.storage.engine import open_database
from collector.storage.grade_waits import OLDEST_WAITING, age_out_grades
from collector.storage.grades import OverQuota, save_grades, waiting_size
from collector.storage.migrate import create_schema, upgrade
from collector.storage.rows import GradeRow
from collector.storage.tables import grades

RUN_COLUMNS = (
    "id, owner, agent_id, trace_id, run_key, status, started_ns, ended_ns, tool_errors, "
    "llm_calls, error_class, span_count, has_agent_span, last_received_at, tool_calls, updated_at"
)


def store_run(conn: Connection, run_id: str, merged: bool = True) -> None:
    """A run row with what every revision since 0012 requires, nothing else."""
    conn.execute(
        text(
            f"INSERT INTO runs ({RUN_COLUMNS}, merged) VALUES (:id, 'o', 'a', :id, 'k', "
            "'completed', 0, 0, 0, 0, 'none', 1, false, 0, '[]', 0, :merged)"
        ),
        {"id": run_id, "merged": merged},
    )


def grade(run_id: str, owner: str = "o", at: float = 1.0, output: str | None = "out") -> GradeRow:
    return GradeRow(run_id, owner, "agent", f"key-{run_id}", False, None, None, output, None, at)


def waiting(conn: Connection) -> dict[str, int]:
    rows = conn.execute(text("SELECT run_id, waiting_bytes FROM grades")).all()
    return {run_id: size for run_id, size in rows}


def usage(conn: Connection) -> dict[str, int]:
    rows = conn.execute(text("SELECT owner, waiting_bytes FROM grade_usage")).all()
    return {owner: size for owner, size in rows if size}


def test_grade_rows_are_the_grades_columns() -> None:
    """`grade_of` reads a row positionally; `save_grades` binds one by name."""
    assert list(GradeRow._fields) == [column.name for column in grades.columns]


def test_the_upgrade_counts_the_grades_already_waiting(empty_database_url: str) -> None:
    db = open_database(empty_database_url)
    upgrade(db, "0014")
    rows = [
        grade("r-merged"),
        grade("r-unmerged"),
        grade("w-1", output="é" * 10),
        grade("w-2", output=None),
        grade("w-3", owner="p"),
    ]
    with db.writer.begin() as conn:
        store_run(conn, "r-merged")
        store_run(conn, "r-unmerged", merged=False)  # SQLite: outside the id index
        for row in rows:
            values = dict(row._asdict())
            del values["waiting_bytes"]
            names = ", ".join(values)
            marks = ", ".join(f":{name}" for name in values)
            conn.execute(text(f"INSERT INTO grades ({names}) VALUES ({marks})"), values)
    create_schema(db)
    sizes = {row.run_id: waiting_size(row) for row in rows}
    with db.reader.connect() as conn:
        assert waiting(conn) == {**sizes, "r-merged": 0, "r-unmerged": 0}
        assert usage(conn) == {"o": sizes["w-1"] + sizes["w-2"], "p": sizes["w-3"]}
    db.dispose()


def test_aging_goes_in_steps_and_keeps_every_grade_whose_run_is_stored(
    database_url: str,
) -> None:
    db = open_database(database_url)
    create_schema(db)
    old = [grade(f"old-{i}") for i in range(5)]
    fresh = grade("fresh", at=100.0)
    with db.writer.begin() as conn:
        store_run(conn, "stored")
        for row in [*old, fresh, grade("stored"), grade("came-late")]:
            assert not isinstance(save_grades(db.session(conn), [row], 1 << 20), OverQuota)
        store_run(conn, "came-late")  # stored without meeting its grade: kept all the same
        steps = [age_out_grades(db.session(conn), 50.0, limit=2) for _ in range(4)]
    assert steps == [2, 2, 2, 0]
    with db.reader.connect() as conn:
        assert waiting(conn) == {"fresh": waiting_size(fresh), "stored": 0, "came-late": 0}
        assert usage(conn) == {"o": waiting_size(fresh)}
    db.dispose()


def test_an_aging_step_reads_only_the_oldest_waiting_grades(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'plan.db'}")
    create_schema(db)
    with db.reader.connect() as conn:
        sql = OLDEST_WAITING.format(mark="?")
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", (1.0, 10)).all()
    details = " ".join(str(row[-1]) for row in plan)
    assert "ix_grades_waiting" in details and "TEMP B-TREE" not in details
    db.dispose()
