"""A screening harness records the outcome it observed (docs/loop.md "Graded outcomes").

Only `grader` keys post grades; an agent cannot grade itself. A grade is
stored under the key's owner, keyed by (agent name, run key); the last one
posted wins, and it applies to the run whether the run's spans came before
it or come after. Durable before this returns, like spans.
"""

from __future__ import annotations

from api.auth import Caller
from api.ports import GradeInput, GradeStore
from api.render import rfc3339
from api.schemas import GradeAccepted


def post_grade(store: GradeStore, caller: Caller, grade: GradeInput) -> GradeAccepted:
    """Stored, or api.problems' QuotaExceeded / Unavailable from the store."""
    owner = caller.grader()
    receipt = store.save_grade(owner, grade)
    return GradeAccepted(
        agent=grade.agent,
        run_key=grade.run_key,
        success=grade.success,
        graded_at=rfc3339(receipt.graded_at) or "",
        run_ids=list(receipt.run_ids),
    )
