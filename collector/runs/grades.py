"""`api.ports.GradeStore`: a posted grade, written by the batch writer.

A grade goes into the writer's next transaction as a job, like the runs the
recomputer stores: one writer per process (SQLite has one write lock), group
commit, and the 202 only once it is committed. Which runs a grade names, and
how it meets them, is `storage.grades`.

A grade that would wait for its run past its owner's quota of waiting bytes
is refused (`QuotaExceeded`, 429): retryable, since waiting grades free their
bytes when their runs arrive or when they age out.
"""

from __future__ import annotations

from api.ports import GradeInput, GradeReceipt
from api.problems import QuotaExceeded, Unavailable
from collector.assembly.identity import agent_id
from collector.assembly.membership import keyed_run_ids
from collector.errors import Overloaded
from collector.runs.queue import JobSink
from collector.storage.grades import OverQuota, save_grades
from collector.storage.rows import GradeRow
from collector.types import Clock

# Retry-After of a refusal: bytes free whenever a waiting grade's run arrives,
# so the answer cannot say when; a minute of polling costs one row read.
QUOTA_RETRY_AFTER_S = 60.0


class GradeDesk:
    def __init__(self, writer: JobSink, clock: Clock, *, quota_bytes: int) -> None:
        self._writer = writer
        self._clock = clock
        self._quota_bytes = quota_bytes

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
        quota = self._quota_bytes
        try:
            saved = self._writer.submit_job(lambda conn: save_grades(conn, rows, quota)).result()
        except Overloaded as exc:
            raise Unavailable(str(exc), exc.retry_after_s) from None
        if isinstance(saved, OverQuota):
            raise QuotaExceeded(_refusal(saved), QUOTA_RETRY_AFTER_S)
        return GradeReceipt(graded_at=now, run_ids=sorted(saved))


def _refusal(over: OverQuota) -> str:
    return (
        f"this owner's grades waiting for their runs hold {over.waiting_bytes} of "
        f"{over.quota_bytes} bytes and this one needs {over.grade_bytes}: a waiting grade "
        "frees its bytes when its run arrives or when it ages out; a grade for a stored run "
        "is always taken"
    )
