"""The evidence document of a screened run: what `/runs/{id}/evidence` returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Mark = Literal["found", "missed"]


class Marked(BaseModel):
    text: str
    mark: Mark | None = Field(description="found or missed: a word of the expected output")


class RunEvidence(BaseModel):
    run_id: str
    screening_id: str | None
    task_id: str | None
    round: int | None = Field(description="badge.screening.round, 1 first")
    grader: str | None
    score: float | None = Field(description="badge.grade.score, 0 to 1")
    success: bool | None = Field(description="the grade the screener recorded")
    http_status: int | None = Field(description="the agent's HTTP status; null for a callable")
    error_class: str = Field(description="the dispatch's error class (`none`: it answered)")
    detail: str | None = Field(description="why the dispatch failed, as the screener recorded it")
    prompt: str | None = Field(description="the request body's `prompt`")
    expected_output: str | None
    output: str | None
    request_body: str | None = Field(description="the JSON sent (event badge.request)")
    response_body: str | None = Field(description="the body received (event badge.response)")
    found: list[str] | None = Field(
        description="the expected output's words present in the output (words and fuzzy "
        "graders; null for the others or without an answer)"
    )
    missed: list[str] | None = Field(description="the expected output's words it lacks")
    output_marked: list[Marked] = Field(
        description="the output in pieces, its found words marked; joined, the output"
    )
    expected_marked: list[Marked] = Field(
        description="the expected output in pieces, found and missed words marked"
    )
