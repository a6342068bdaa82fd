"""`api.ports.GradeStore`: a posted grade, written by the batch writer.

A grade goes into the writer's next transaction as a job, like the runs the
recomputer stores: one writer per process (SQLite has one write lock), group
commit, and the 202 only once it is committed. Which runs a grade names, and
how it meets them, is `storage.grades`.
"""

from __future__ import annotations

from collections.abc import Callable

from api.ports import GradeInput, GradeReceipt, Unavailable
from collector.assembly.identity import agent_id
from collector.assembly.membership import keyed_run_ids
from collector.errors import Overloaded
from collector.runs.recompute import JobSink
from collector.storage.grades import save_grades
from collector.storage.rows import GradeRow

Clock = Callable[[], float]


class GradeDesk:
    def __init__(self, writer: JobSink, clock: Clock) -> None:
        self._writer = writer
        self._clock = clock

    def save_grade(self, owner: str, grade: GradeInput) -> GradeReceipt:
        now = self._clock()
        rows = [
            GradeRow(
                run_id,
                owner,
                grade.agent,
                grade.run_key,
                grade.success,
                grade.score,
                grade.expected_output,
                grade.output,
                grade.error_class,
                now,
            )
            for run_id in keyed_run_ids(agent_id(owner, grade.agent), grade.run_key)
        ]
        try:
            graded = self._writer.submit_job(lambda conn: save_grades(conn, rows)).result()
        except Overloaded as exc:
            raise Unavailable(str(exc), exc.retry_after_s) from None
        return GradeReceipt(graded_at=now, run_ids=sorted(graded))
