"""What can go wrong answering a reader, said without HTTP.

The view functions (api.views) raise these; the JSON routes, the dashboard
pages and the CLI all call those views, and each turns a problem into its
own answer: api.errors maps them to an HTTP status (JSON for /api/v1, an
HTML page for the dashboard), the CLI to a message and an exit code. A view
never needs to know which of the three asked.
"""

from __future__ import annotations


class Problem(Exception):
    """A request the collector understood and cannot answer; `detail` says why
    in one sentence (it is what the caller reads)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(Problem):
    """No such agent, run or screening (or one the caller may not know of)."""


class Invalid(Problem):
    """A parameter that is well formed but cannot be answered: a malformed
    cursor, bad weights, a compare side without a finished run."""


class Conflict(Problem):
    """The subject exists but cannot be answered in its present state: a
    certificate of a run still running, a screening id several agents share;
    or a write would replace or contradict what is stored (a screening run again)."""


class KeyRequired(Problem):
    """Only a key may do this, and none (or an unknown one) was given."""


class NotYours(Problem):
    """A key was given, and it may not do this: another owner's, or the wrong role."""


class TooLarge(Problem):
    """A request body past the route's bound (api.json_bodies); not retried as it is."""


class Unavailable(Problem):
    """The store cannot take a write now; the client should retry."""

    def __init__(self, detail: str, retry_after_s: float = 1.0) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class QuotaExceeded(Problem):
    """The owner's grades waiting for their runs would pass its quota; the
    client may retry once some have met their runs or aged out."""

    def __init__(self, detail: str, retry_after_s: float) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s
