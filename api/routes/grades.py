"""POST /api/v1/grades: a screening harness records the outcome it observed
(api.views.grades; docs/loop.md).

The body is checked here, field by field. A grade that waits for its run
counts against its owner's quota; past it, 429 with Retry-After (api.errors).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictStr

from api.deps import CallerDep, GradesDep
from api.errors import error
from api.json_bodies import KeyFirstRoute, bound
from api.ports import GradeInput
from api.schemas import GradeAccepted
from api.views import grades as views

router = APIRouter(prefix="/api/v1", tags=["grades"], route_class=KeyFirstRoute)

MAX_TEXT_BYTES = 64 * 1024  # docs/loop.md: strings are capped at 64 KiB
# Five such strings, each as JSON may escape it (a control character is six
# bytes, \u0001): 1.9 MiB at most; past 4 MiB no body is a valid grade.
MAX_BODY_BYTES = 4 << 20


def _storable(text: str) -> str:
    """At most 64 KiB of UTF-8, and no NUL (no SQL text column stores one)."""
    if len(text.encode()) > MAX_TEXT_BYTES:
        raise ValueError(f"longer than {MAX_TEXT_BYTES} bytes of UTF-8")
    if "\x00" in text:
        raise ValueError("holds a NUL character")
    return text


def _finite(number: float | None) -> float | None:
    if number is not None and not math.isfinite(number):
        raise ValueError("must be a finite number")
    return number


Text = Annotated[StrictStr, AfterValidator(_storable)]
Name = Annotated[StrictStr, Field(min_length=1), AfterValidator(_storable)]


class GradeBody(BaseModel):
    """Unknown fields are ignored; every known one must have its JSON type."""

    model_config = ConfigDict(extra="ignore")

    agent: Name = Field(description="the agent's name under the key's owner")
    run_key: Name = Field(description="the run's badge.run.id, else its trace id (hex)")
    success: StrictBool = Field(description="the observed outcome")
    score: Annotated[float | None, AfterValidator(_finite)] = Field(
        default=None, strict=True, description="a grader's score, any finite number"
    )
    expected_output: Text | None = None
    output: Text | None = None
    error_class: Text | None = Field(default=None, description="e.g. wrong_answer")


RETRY_AFTER = {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}}
RESPONSES: dict[int | str, dict[str, Any]] = {
    401: error("no key, or an unknown or revoked one (checked before the body is read)"),
    403: error("the key is not a grader key"),
    429: error(
        "the grade would wait for its run, and the owner's grades waiting for their runs "
        "would pass BADGE_GRADE_QUOTA_BYTES; they free as their runs arrive or age out "
        "(BADGE_GRADE_WAIT_DAYS). A grade for a stored run is never refused"
    )
    | {"headers": RETRY_AFTER},
    413: error(f"body over {MAX_BODY_BYTES} bytes"),
    503: error("the collector cannot store it now; retry") | {"headers": RETRY_AFTER},
}


@router.post(
    "/grades",
    status_code=202,
    response_model=GradeAccepted,
    responses=RESPONSES,
    openapi_extra=bound(MAX_BODY_BYTES),
)
def post_grade(
    caller: CallerDep, store: GradesDep, body: Annotated[GradeBody, Body()]
) -> GradeAccepted:
    """Stored durably before the 202, like spans."""
    grade = GradeInput(
        agent=body.agent,
        run_key=body.run_key,
        success=body.success,
        score=body.score,
        expected_output=body.expected_output,
        output=body.output,
        error_class=body.error_class,
    )
    return views.post_grade(store, caller, grade)
