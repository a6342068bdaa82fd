"""What a caller may see of a run (docs/api.md "Who may read what").

Public: what ranks an agent (outcome and its source, latency, steps, tokens,
cost, and the class of error from a fixed list). The owner's key, or
--insecure: every text a span or a grader wrote as well: a grade's
`expected_output` and `output` (an evaluation's explanation lands in
`output`), and an `error_class` beyond the fixed list. Without the key a
grade's answer key would let an agent read the expected answers to its
earlier runs of a task, and `error.type` is free text (issue 29).

Every run the API or the dashboard shows passes through `shown_to`, so the
two answer alike. Imports only the API's own ports and auth.
"""

from __future__ import annotations

from dataclasses import replace

from api.auth import Caller
from api.ports import GradeInfo, RunInfo

# The classes a harness or an instrumented client reports for a failed call;
# anything else is free text and reads `other` without the owner's key.
ERROR_CLASSES = frozenset(
    {"none", "timeout", "http_error", "bad_response_shape", "connection_error", "exception"}
)
OTHER_ERROR = "other"


def public_error_class(value: str) -> str:
    """`value` when it is one of the fixed classes, else `other`."""
    return value if value in ERROR_CLASSES else OTHER_ERROR


def shown_to(caller: Caller, run: RunInfo) -> tuple[RunInfo, bool]:
    """The run as this caller may see it, and whether that is the owner's view."""
    if caller.sees_owned(run.owner):
        return run, True
    public = replace(run, error_class=public_error_class(run.error_class), grade=_public(run.grade))
    return public, False


def _public(grade: GradeInfo | None) -> GradeInfo | None:
    """The verdict, score and time stay; what the grader or the spans wrote goes."""
    if grade is None:
        return None
    kind = grade.error_class
    return replace(
        grade,
        expected_output=None,
        output=None,
        error_class=None if kind is None else public_error_class(kind),
    )
