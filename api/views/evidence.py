"""What a screened run asked, expected and got (owner only).

The screener records each run's evidence on its root span (docs/screening.md
"What joins a screened run"): the grader, its score, the output, the expected
output and the HTTP status as attributes, the bodies sent and received as the
events `badge.request` and `badge.response`. This reads them back and marks
the words the grader found and missed (scoring.graders) in both texts.

Every text here was written by a span, so the whole document is the
owner's, as the trace is (docs/api.md "Who may read what"): 401 without a
key, 403 with another owner's, open under --insecure. `public_facts` is what
anyone may read of it: the grader's name, the score and the HTTP status.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import scoring
from api.auth import Caller
from api.evidence_schemas import Mark, Marked, RunEvidence
from api.ports import ReadStore, RunInfo
from api.problems import NotFound
from api.views.runs import MAX_TRACE_SPANS, find_run
from api.visibility import OTHER_ERROR

# The graders that report the words they found and missed (docs/screening.md "Graders").
WORD_GRADERS: Final = frozenset({"words", "fuzzy"})
# A word as scoring.graders reads one, plus the combining marks NFKC folds into it,
# so "cafe\u0301" in an answer is one word here as it is once normalised.
_TOKEN: Final = re.compile(r"(?:[^\W_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff])+")


@dataclass(frozen=True, slots=True)
class RootFacts:
    """What a screened run's root span recorded, each value of the type it should have."""

    round: int | None
    grader: str | None
    score: float | None
    success: bool | None
    http_status: int | None
    detail: str | None
    expected_output: str | None
    output: str | None
    request_body: str | None
    response_body: str | None


def evidence(store: ReadStore, caller: Caller, run_id: str) -> RunEvidence:
    """Owner only: a screened run's prompt, expected output, output, grader, score,
    HTTP status and bodies, with the words the grader found and missed."""
    run = find_run(store, run_id)
    caller.require_reader(run.owner)
    facts = root_facts(store, run)
    if facts is None:
        raise NotFound("no screening evidence is stored for this run")
    return evidence_of(run, facts)


def root_facts(store: ReadStore, run: RunInfo) -> RootFacts | None:
    """The root's screening evidence; None for a run no screening made, or whose
    root span retention removed."""
    if run.screening_id is None:
        return None
    view = store.trace(run, MAX_TRACE_SPANS)
    root = next((span for span in view.spans if span.verdict.root), None)
    if root is None:
        return None
    attributes: Mapping[str, Any] = root.details.get("attributes") or {}
    events = {e.get("name"): e.get("attributes") or {} for e in root.details.get("events") or []}
    request, response = events.get("badge.request", {}), events.get("badge.response", {})
    failure = events.get("exception", {})
    detail = _text(response.get("detail"))
    if detail is None and failure:
        detail = ": ".join(
            t for t in (_text(failure.get(k)) for k in ("exception.type", "exception.message")) if t
        )
    return RootFacts(
        round=_integer(attributes.get("badge.screening.round")),
        grader=_text(attributes.get("badge.grader")),
        score=_number(attributes.get("badge.grade.score")),
        success=_flag(attributes.get("badge.run.success")),
        http_status=_integer(attributes.get("http.response.status_code")),
        detail=detail or None,
        expected_output=_text(attributes.get("badge.expected_output")),
        output=_text(attributes.get("badge.output")),
        request_body=_text(request.get("body")),
        response_body=_text(response.get("body")),
    )


def evidence_of(run: RunInfo, facts: RootFacts) -> RunEvidence:
    """The owner's document: every fact, the prompt out of the request body, the marks."""
    found, missed = graded_words(facts, run.error_class)
    return RunEvidence(
        run_id=run.id,
        screening_id=run.screening_id,
        task_id=run.task_id,
        round=facts.round,
        grader=facts.grader,
        score=facts.score,
        success=facts.success,
        http_status=facts.http_status,
        error_class=run.error_class,
        detail=facts.detail,
        prompt=prompt_of(facts.request_body),
        expected_output=facts.expected_output,
        output=facts.output,
        request_body=facts.request_body,
        response_body=facts.response_body,
        found=found,
        missed=missed,
        output_marked=marked(facts.output, set(found or ()), set()),
        expected_marked=marked(facts.expected_output, set(found or ()), set(missed or ())),
    )


def public_facts(facts: RootFacts) -> RootFacts:
    """What anyone may read: a grader of the fixed list (else `other`), a score in
    0..1 and an HTTP status code; no text."""
    grader = facts.grader
    if grader is not None and grader not in scoring.GRADERS:
        grader = OTHER_ERROR  # free text, as an unknown error class reads
    score = facts.score if facts.score is not None and 0 <= facts.score <= 1 else None
    status = facts.http_status
    return RootFacts(
        round=facts.round,
        grader=grader,
        score=score,
        success=facts.success,
        http_status=status if status is not None and 100 <= status <= 599 else None,
        detail=None,
        expected_output=None,
        output=None,
        request_body=None,
        response_body=None,
    )


def graded_words(facts: RootFacts, error_class: str) -> tuple[list[str] | None, list[str] | None]:
    """The grader's found and missed words (scoring.graders), for the graders that report
    them and a dispatch that answered; (None, None) otherwise."""
    if (
        facts.grader not in WORD_GRADERS
        or error_class != "none"
        or facts.output is None
        or facts.expected_output is None
    ):
        return None, None
    grade = scoring.grade(facts.grader, facts.output, facts.expected_output, "none")
    return list(grade.found), list(grade.missed)


def marked(text: str | None, found: set[str], missed: set[str]) -> list[Marked]:
    """`text` in pieces: each word whose normalised form is found (or missed) marked so."""
    if not text:
        return []
    pieces: list[Marked] = []
    at = 0
    for match in _TOKEN.finditer(text):
        words = scoring.words(match.group())
        mark: Mark | None = None
        if words and words <= found:
            mark = "found"
        elif words and words <= missed:
            mark = "missed"
        if mark is None:
            continue
        if match.start() > at:
            pieces.append(Marked(text=text[at : match.start()], mark=None))
        pieces.append(Marked(text=match.group(), mark=mark))
        at = match.end()
    if at < len(text):
        pieces.append(Marked(text=text[at:], mark=None))
    return pieces


def prompt_of(body: str | None) -> str | None:
    """The `prompt` of the JSON the screener sent; None when the body is cut or not JSON."""
    if body is None:
        return None
    try:
        sent = json.loads(body)
    except (ValueError, RecursionError):
        return None
    prompt = sent.get("prompt") if isinstance(sent, dict) else None
    return prompt if isinstance(prompt, str) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None
