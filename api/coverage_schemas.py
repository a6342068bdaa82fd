"""Response models of an agent's coverage (CONVENTIONS.md section 6): what the
collector could not recognise of its spans, and the warning beside
/diagnostics when that is too much to trust a zero."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ScopeCoverageItem(BaseModel):
    scope: str = Field(description="the instrumentation scope name (empty when a span gave none)")
    spans: int
    unrecognised_spans: int = Field(description="`other` spans no convention knows, roots excepted")
    unrecognised_share: float = Field(description="unrecognised_spans / spans, 0-1, 4 decimals")
    roles: dict[str, int] = Field(description="spans by role: tool, llm, agent, other")
    conventions: dict[str, int] = Field(
        description="spans each convention recognised, by a rule or as one of its family's"
    )


class UnrecognisedPair(BaseModel):
    scope: str
    name: str = Field(description="the span name")
    spans: int
    example_run_id: str = Field(description="a run that has such a span (open its trace)")


class Coverage(BaseModel):
    agent_id: str
    runs_counted: int = Field(description="the agent's newest runs looked at, at most 1,000")
    spans: int = Field(description="their spans that name the agent")
    unrecognised_spans: int
    unrecognised_share: float | None = Field(
        description="unrecognised_spans / spans, 0-1, 4 decimals; null without spans"
    )
    conventions: dict[str, int] = Field(
        description="spans each convention recognised, every scope together, most first"
    )
    scopes: list[ScopeCoverageItem] = Field(description="most unrecognised first")
    top_unrecognised: list[UnrecognisedPair] = Field(
        description="the 20 most frequent unrecognised (scope, span name) pairs"
    )
    warning: str | None = Field(
        description="set when more than 10% of the spans are unrecognised (as /diagnostics)"
    )


class CoverageWarning(BaseModel):
    """More than 10% of the agent's spans were not recognised: its tool steps,
    LLM calls and tokens may be undercounted (docs/conventions.md)."""

    unrecognised_share: float = Field(description="0-1, 4 decimals")
    unrecognised_spans: int
    spans: int
    runs_counted: int
    scopes: list[str] = Field(description="the scopes of the unrecognised spans, most first")
    message: str = Field(
        description="e.g. 41% of this agent's spans, from scope `acme.tracer`, were not recognised"
    )
