"""What an agent answered, read by SCREEN.md section 3's table: one error class per dispatch.

Both targets end here: an HTTP answer (status and body bytes) and a Python
callable's return value are read into one `Answer`, so the two cannot
disagree on what a well-shaped answer is. Every function returns a value and
none raises on anything an agent sent: a bad answer is a recorded run,
never a crash of the screener. Pure: no I/O, nothing of the collector's.
"""

from __future__ import annotations

import json
import math
import traceback
from dataclasses import dataclass
from typing import Final

# SCREEN.md section 3, in the order the first that applies sets the class.
ERROR_CLASSES: Final = (
    "timeout",
    "connection_error",
    "http_error",
    "bad_response_shape",
    "exception",
    "none",
)
MAX_BODY_BYTES: Final = 1 << 20  # an answer over 1 MiB is bad_response_shape
MAX_COUNT: Final = 2**63 - 1  # token counts beyond this are not counts
# The run status each class records (RUNS.md: honoured through a grader key only).
_RUN_STATUS: Final = {"timeout": "timeout", "connection_error": "failed"}


@dataclass(frozen=True, slots=True)
class Answer:
    """One dispatch's answer; `body` is the text as received (the evidence), `detail` says why."""

    error_class: str
    output: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    http_status: int | None = None
    body: str | None = None
    detail: str | None = None
    exception_type: str | None = None
    stacktrace: str | None = None

    @property
    def run_status(self) -> str:
        """`badge.run.status`: timeout and connection failures are not the agent's answers."""
        return _RUN_STATUS.get(self.error_class, "completed")


def failed(error_class: str, detail: str, *, http_status: int | None = None) -> Answer:
    """An answer that never arrived whole (timeout, connection_error)."""
    return Answer(error_class, http_status=http_status, detail=detail)


def read_http_answer(status: int, body: bytes, *, too_big: bool) -> Answer:
    """The class of a complete HTTP answer: http_error, bad_response_shape or none."""
    text = body.decode("utf-8", errors="replace")
    if not 200 <= status <= 299:
        return Answer("http_error", http_status=status, body=text, detail=f"HTTP {status}")
    if too_big:
        return Answer(
            "bad_response_shape",
            http_status=status,
            body=text,
            detail=f"body over {MAX_BODY_BYTES} bytes",
        )
    try:
        # An integer past Python's 4,300-digit limit is valid JSON but no count:
        # read as None, so one such field does not make the answer "not JSON".
        document = json.loads(body, parse_int=_int_or_none)
    except (ValueError, RecursionError):
        return Answer("bad_response_shape", http_status=status, body=text, detail="not JSON")
    return read_document(document, http_status=status, body=text)


def read_result(value: object) -> Answer:
    """A Python callable's return value: the output string, or a dict shaped like the HTTP body."""
    if isinstance(value, str):
        return Answer("none", output=value, body=value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return read_document(value, http_status=None, body=text)


def read_document(document: object, *, http_status: int | None, body: str) -> Answer:
    """A decoded answer: an object with a string `output`; counts and cost only when valid."""
    if not isinstance(document, dict):
        kind = type(document).__name__
        return Answer("bad_response_shape", http_status=http_status, body=body, detail=kind)
    output = document.get("output")
    if not isinstance(output, str):
        detail = "no output" if "output" not in document else "output is not a string"
        return Answer("bad_response_shape", http_status=http_status, body=body, detail=detail)
    return Answer(
        "none",
        output=output,
        input_tokens=_count(document.get("input_tokens")),
        output_tokens=_count(document.get("output_tokens")),
        cost_usd=_cost(document.get("total_cost_usd")),
        http_status=http_status,
        body=body,
    )


def raised(exc: BaseException) -> Answer:
    """A callable that raised: error class `exception`, its type, message and traceback kept."""
    trace = "".join(traceback.format_exception(exc))
    kind = type(exc).__qualname__
    return Answer("exception", detail=str(exc), exception_type=kind, stacktrace=trace)


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _count(value: object) -> int | None:
    # bool is an int in Python, not in JSON: `true` is not a token count.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


def _cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        cost = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None
