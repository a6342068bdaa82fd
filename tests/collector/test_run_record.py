"""The run record is written out once (collector/storage/rows.py RunRow and
RUN_KINDS): the table, the assembled run, the read API's RunInfo and its run
summary are named after it, so adding a field touches the record, the
assembly that computes it and one line of each read shape (issue 31)."""

from __future__ import annotations

from dataclasses import fields

from api.ports import RunInfo
from api.schemas import RunSummary
from collector.assembly.runs import Run
from collector.storage.rows import RUN_COLUMNS, RUN_KINDS
from collector.storage.tables import runs

# What a stored run is besides the record: its row number, its trace's
# number, the SQLite merge flag, the retention seal.
ASSIGNED = {"seq", "trace_ref", "merged", "sealed_at"}
# What only storing a run knows.
STORED_ONLY = {"owner", "terminal_at", "updated_at"}
# RunInfo's fields of another shape than their columns: times in seconds,
# the tool calls decoded, the grade joined from the grades table.
READ_SHAPES = {
    "started_at": "started_ns",
    "ended_at": "ended_ns",
    "tool_calls": "tool_calls",
    "sealed": "sealed_at",
}


def test_the_table_is_the_record_with_its_kinds() -> None:
    assert set(RUN_KINDS) == set(RUN_COLUMNS)
    assert [c.name for c in runs.columns if c.name not in ASSIGNED] == list(RUN_COLUMNS)
    assert runs.c.task_id.nullable and not runs.c.status.nullable


def test_the_assembled_run_is_named_as_the_record() -> None:
    on_run = {f.name for f in fields(Run)}
    assert set(RUN_COLUMNS) - STORED_ONLY <= on_run  # tool_calls, evaluation: converted


def test_the_read_shapes_are_named_as_the_record() -> None:
    for field in fields(RunInfo):
        column = READ_SHAPES.get(field.name, field.name)
        assert column in RUN_COLUMNS or column in ASSIGNED or field.name == "grade", field.name
    info = {f.name for f in fields(RunInfo)}
    for name in RunSummary.model_fields:
        assert name in info or name == "owner_view", name
