"""An agent's coverage (CONVENTIONS.md section 6) and the warning it raises.

The detail (span names, example runs) is the owner's, like the trace view;
the warning is public, as /diagnostics is: it says how far an agent's
public counts can be trusted, and names only instrumentation scopes.
"""

from __future__ import annotations

from collections import Counter

from api.auth import Caller
from api.coverage_schemas import Coverage, CoverageWarning, ScopeCoverageItem, UnrecognisedPair
from api.ports import Coverage as CoverageFigures
from api.ports import ReadStore
from api.views.agents import find_agent

# CONVENTIONS.md section 6: warn when more than 10% of the spans are unrecognised.
WARNING_SHARE = 0.10
NAMED_SCOPES = 3  # the message names this many scopes, then "and N more"


def coverage(store: ReadStore, caller: Caller, agent_id: str) -> Coverage:
    """Owner only: the agent's spans over its newest runs, recognised or not."""
    agent = find_agent(store, agent_id)
    caller.require_reader(agent.owner)
    return coverage_answer(agent.id, store.coverage(agent.id))


def coverage_answer(agent_id: str, figures: CoverageFigures) -> Coverage:
    warning = warning_of(figures)
    return Coverage(
        agent_id=agent_id,
        runs_counted=figures.runs,
        spans=figures.spans,
        unrecognised_spans=figures.unrecognised,
        unrecognised_share=_share(figures.unrecognised, figures.spans),
        conventions=_conventions(figures),
        scopes=[
            ScopeCoverageItem(
                scope=s.scope,
                spans=s.spans,
                unrecognised_spans=s.unrecognised,
                unrecognised_share=_share(s.unrecognised, s.spans) or 0.0,
                roles=dict(s.roles),
                conventions=dict(s.conventions),
            )
            for s in figures.scopes
        ],
        top_unrecognised=[
            UnrecognisedPair(
                scope=n.scope, name=n.name, spans=n.spans, example_run_id=n.example_run_id
            )
            for n in figures.unrecognised_names
        ],
        warning=warning.message if warning else None,
    )


def _conventions(figures: CoverageFigures) -> dict[str, int]:
    summed: Counter[str] = Counter()
    for scope in figures.scopes:
        summed.update(scope.conventions)
    return dict(sorted(summed.items(), key=lambda kv: (-kv[1], kv[0])))


def figures_for_warning(store: ReadStore, agent_id: str) -> CoverageFigures:
    """The totals (one read of the runs), and the scopes only when they warn:
    /diagnostics and the agent page pay for the spans only when there is a
    warning to name them in."""
    totals = store.coverage(agent_id, detail=False)
    return store.coverage(agent_id) if warns(totals) else totals


def coverage_warning(store: ReadStore, agent_id: str) -> CoverageWarning | None:
    return warning_of(figures_for_warning(store, agent_id))


def warns(figures: CoverageFigures) -> bool:
    """More than WARNING_SHARE of the spans are unrecognised (CONVENTIONS.md section 6)."""
    return figures.spans > 0 and figures.unrecognised / figures.spans > WARNING_SHARE


def warning_of(figures: CoverageFigures) -> CoverageWarning | None:
    """The warning when more than WARNING_SHARE of the spans are unrecognised."""
    share = _share(figures.unrecognised, figures.spans)
    if share is None or not warns(figures):
        return None
    scopes = [s.scope for s in figures.scopes if s.unrecognised]
    return CoverageWarning(
        unrecognised_share=share,
        unrecognised_spans=figures.unrecognised,
        spans=figures.spans,
        runs_counted=figures.runs,
        scopes=scopes,
        message=_message(figures.unrecognised / figures.spans, scopes),
    )


def _message(share: float, scopes: list[str]) -> str:
    """`41% of this agent's spans, from scope `acme.tracer`, were not recognised`."""
    percent = share * 100  # "10%" would read as the threshold itself: say 10.4%
    said = f"{percent:.0f}%" if round(percent) > WARNING_SHARE * 100 else f"{percent:.1f}%"
    named = [f"`{s}`" if s else "(no scope name)" for s in scopes[:NAMED_SCOPES]]
    if not named:  # the unrecognised spans name another service (a claimed run)
        return f"{said} of this agent's spans were not recognised"
    more = len(scopes) - len(named)
    if more:
        named.append(f"{more} more")
    where = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
    noun = "scopes" if len(scopes) > 1 else "scope"
    return f"{said} of this agent's spans, from {noun} {where}, were not recognised"


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
