"""The dashboard's pages: the loop of docs/loop.md, in a browser.

Every number on a page comes from the read layer (api.views, the same
functions that answer `/api/v1/...`), so a page and the JSON never
disagree; a problem a view raises becomes an error page in api.errors.
Pages are rendered on the server; the small script in static/ only re-ranks
the board, submits pickers and loads a trace with the key the viewer types
(kept in memory, sent as a header, never stored).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

import scoring
from api.dashboard.charts import (
    AXES,
    AXIS_LABELS,
    PAIR_LABELS,
    TEST_LABELS,
    radar_shape,
    sparkline,
)
from api.deps import CallerDep, Cursor, StoreDep, WeightsDep
from api.ports import ALL_RUNS, OUTCOMES, RunFilter
from api.problems import Invalid
from api.render import rfc3339
from api.views import agents as agent_views
from api.views import badges as badge_views
from api.views import coverage as coverage_views
from api.views import evidence as evidence_views
from api.views import loop as loop_views
from api.views import runs as run_views
from api.views import screenings as screening_views
from scoring import policy

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
router = APIRouter(include_in_schema=False)

BOARD_LIMIT = 100  # rows the leaderboard shows
OFFENDERS = 5
SCREENINGS_SHOWN = 10  # on the overview; the screenings page lists them all
STATUSES = ("running", "completed", "failed", "timeout")
# The page's own scripts and styles only: no inline code, no other origin.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _number(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,.{digits}f}"


def _when(text: str | None) -> str:
    """An RFC 3339 time, shorter: 2026-12-01 03:45:12 UTC."""
    if not text:
        return "–"
    return text.replace("T", " ").split(".")[0].rstrip("Z") + " UTC"


def _segment(text: str) -> str:
    """One path segment of a URL: every reserved character escaped, "/" included."""
    return quote(text, safe="")


def _inline(text: str | None) -> Markup:
    """Text with Markdown's `code` spans as <code> (the OpenAPI document's
    descriptions use them; /docs showed the backticks), everything escaped."""
    escaped = str(escape(text or ""))
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", escaped))


_CODE_SPAN = re.compile(r"`([^`]+)`")
# A tool step's OTel status as a reader takes it: UNSET is what most
# instrumentations leave on a call that went fine (not an unknown outcome).
STEP_STATUSES = {"ok": "ok", "error": "error", "unset": "no error"}


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _number
    env.filters["when"] = _when
    env.filters["segment"] = _segment
    env.filters["inline"] = _inline
    env.globals["step_statuses"] = STEP_STATUSES
    env.globals["pass_k_top"] = max(policy.PASS_K_LEVELS)
    env.globals["axis_labels"] = AXIS_LABELS
    env.globals["test_labels"] = TEST_LABELS
    env.globals["pair_labels"] = PAIR_LABELS
    env.globals["scoring_policy"] = policy.SCORING_POLICY
    return env


_ENV = _environment()


def page(
    name: str, code: int = 200, headers: Mapping[str, str] | None = None, **context: Any
) -> HTMLResponse:
    html = _ENV.get_template(name).render(**context)
    return HTMLResponse(html, status_code=code, headers={**SECURITY_HEADERS, **(headers or {})})


def error_page(status: int, detail: str, headers: Mapping[str, str] | None = None) -> HTMLResponse:
    """What api.errors answers a page's problem with: its status and sentence."""
    return page("error.html", status, headers, title=str(status), status=status, detail=detail)


def where_of(version: str | None) -> RunFilter:
    """The version picker: empty = every run; `none` = runs without a version
    (as in compare)."""
    if not version:
        return ALL_RUNS
    if version == loop_views.NULL_VERSION:
        return RunFilter(null_version=True)
    return RunFilter(version=version)


def _viewer_weights(request: Request) -> dict[str, float] | None:
    """Slider values from the query (axis=number), or None when none is given."""
    given = {axis: request.query_params.get(axis) for axis in AXES}
    if all(value is None for value in given.values()):
        return None
    weights: dict[str, float] = {}
    for axis, value in given.items():
        try:
            weights[axis] = float(value) if value not in (None, "") else 0.0
        except ValueError:
            raise Invalid(f"the {axis} weight must be a number") from None
    return agent_views.checked_weights(weights)


@router.get("/", response_class=HTMLResponse)
def leaderboard(
    request: Request,
    store: StoreDep,
    all: Annotated[bool, Query()] = False,
) -> HTMLResponse:
    """The API's leaderboard, with each agent's success rate and verified state
    (what /stats says, from the same sums) and its composite over time. Viewer
    weights re-rank it by the weighted radar, for this request only."""
    weights = _viewer_weights(request)
    board, total = store.board(everything=all, weights=weights, offset=0, limit=BOARD_LIMIT)
    rows = [
        {
            "agent": {
                "id": row.agent_id,
                "name": row.name,
                "owner": row.owner,
                "total_runs": row.total_runs,
            },
            "composite": row.composite_score,
            "success_rate": row.success_rate,
            "verified": scoring.verified_state(row.completed_runs, row.graded_runs),
            "last_run_at": rfc3339(row.last_run_at),
            "weighted": row.weighted,
            "trend": sparkline(list(row.trend)),
        }
        for row in board
    ]
    sliders = [{"axis": axis, "label": AXIS_LABELS[axis], "value": 1.0} for axis in AXES]
    if weights is not None:  # shown as set, on the sliders' 0-5 scale
        top = max(weights.values()) or 1.0
        for slider in sliders:
            slider["value"] = round(5 * weights[str(slider["axis"])] / top, 1)
    return page(
        "leaderboard.html",
        title="Leaderboard",
        rows=rows,
        total=total,
        limit=BOARD_LIMIT,
        sliders=sliders,
        reranked=weights is not None,
        everything=all,
    )


def _arithmetic(composite: scoring.Composite | None) -> list[dict[str, Any]]:
    """The composite's three terms, as docs/scoring.md's worked example shows them."""
    if composite is None:
        return []
    return [
        {
            "name": "success rate",
            "weight": 100 * policy.WEIGHT_SUCCESS,
            "input": composite.success_rate,
            "detail": None,
            "points": 100 * policy.WEIGHT_SUCCESS * composite.success_rate,
        },
        {
            "name": "reliability",
            "weight": 100 * policy.WEIGHT_RELIABILITY,
            "input": composite.reliability_score,
            "detail": f"consistency {composite.consistency:.4f} × latency score "
            f"{composite.latency_score:.4f}",
            "points": 100 * policy.WEIGHT_RELIABILITY * composite.reliability_score,
        },
        {
            "name": "cost",
            "weight": 100 * policy.WEIGHT_COST,
            "input": composite.cost_score,
            "detail": None,
            "points": 100 * policy.WEIGHT_COST * composite.cost_score,
        },
    ]


@router.get("/agents/{agent_id}", response_class=HTMLResponse)
def overview(
    request: Request,
    agent_id: str,
    store: StoreDep,
    caller: CallerDep,
    saved: WeightsDep,
    version: Annotated[str | None, Query(max_length=500)] = None,
) -> HTMLResponse:
    """The composite and its arithmetic, the radar, pass^k and what to fix:
    /stats, /fitness, /reliability and /diagnostics from one pass over the
    runs and one read of the cohort; and the coverage of its spans (its
    detail only for a viewer who may read the owner's traces)."""
    where = where_of(version)
    agent = agent_views.agent(store, agent_id)
    versions = loop_views.versions(store, agent.id).items
    scores = store.scores(agent.id, where)
    stats = agent_views.stats_of(agent.id, scores.counts, scores.composite)
    cohort = store.cohort(agent.id, where)
    mine = agent_views.viewer_weights(caller, saved)
    canonical = scores.composite if where == ALL_RUNS else store.composite(agent.id)
    fitness = agent_views.fitness_of([run.record for run in cohort], mine, canonical)
    reliability = agent_views.reliability_of(scores.repeatability)
    owner_view = caller.sees_owned(agent.owner)
    if owner_view:  # the card shows the detail
        figures = store.coverage(agent.id)
    else:
        figures = coverage_views.figures_for_warning(store, agent.id)
    warning = coverage_views.warning_of(figures)
    diagnosis = loop_views.diagnostics_of(agent.id, cohort, OFFENDERS, warning)
    composite = scores.composite
    screenings = [s for s in store.screenings(agent.id) if _of_version(s.version, version)]
    values = {axis: getattr(fitness, axis) for axis in AXES}
    return page(
        "agent.html",
        title=agent.name,
        agent=agent,
        version=version or "",
        versions=versions,
        null_version=loop_views.NULL_VERSION,
        stats=stats,
        fitness=fitness,
        shape=radar_shape(values, fitness.evidence_needed),
        reliability=reliability,
        diagnosis=diagnosis,
        terms=_arithmetic(composite),
        zero_floor=composite is not None and composite.successful_runs == 0,
        screenings=[screening_views.screening_item(s) for s in screenings[:SCREENINGS_SHOWN]],
        screenings_total=len(screenings),
        embed=badge_views.embed(str(request.base_url), agent.id, agent.name),
        coverage=coverage_views.coverage_answer(agent.id, figures),
        owner_view=owner_view,
    )


@router.get("/agents/{agent_id}/coverage", response_class=HTMLResponse)
def coverage(agent_id: str, store: StoreDep, caller: CallerDep) -> HTMLResponse:
    """The Coverage card alone, with its owner-only detail: the owner's key
    (sent by the agent page's script) or --insecure, as GET .../coverage."""
    agent = agent_views.agent(store, agent_id)
    answer = coverage_views.coverage(store, caller, agent.id)
    return page(
        "coverage.html",
        title=f"Coverage of {agent.name}",
        agent=agent,
        coverage=answer,
        owner_view=True,
    )


def _of_version(ran: str | None, picked: str | None) -> bool:
    """Did a screening run the version the picker names (every one when none is picked)?"""
    if not picked:
        return True
    return ran is None if picked == loop_views.NULL_VERSION else ran == picked


@router.get("/agents/{agent_id}/runs", response_class=HTMLResponse)
def evidence(
    agent_id: str,
    store: StoreDep,
    caller: CallerDep,
    status: Annotated[str | None, Query(max_length=20)] = None,
    outcome: Annotated[str | None, Query(max_length=20)] = None,
    task: Annotated[str | None, Query(max_length=500)] = None,
    version: Annotated[str | None, Query(max_length=500)] = None,
    cursor: Cursor = None,
) -> HTMLResponse:
    status = status or None
    outcome = outcome if outcome in OUTCOMES else None
    agent = agent_views.agent(store, agent_id)
    versions = loop_views.versions(store, agent.id).items
    listed = run_views.list_runs(
        store,
        caller,
        agent_id=agent.id,
        task_id=task or None,
        version=version or None,
        status=status if status in STATUSES else None,
        outcome=outcome,
        page_size=50,
        cursor=cursor or None,
    )
    filters = {"status": status or "", "outcome": outcome or "", "task": task or ""}
    filters["version"] = version or ""
    return page(
        "runs.html",
        title=f"Runs of {agent.name}",
        agent=agent,
        runs=listed.items,
        next_cursor=listed.next_cursor,
        first_page=not cursor,
        filters=filters,
        statuses=STATUSES,
        outcomes=OUTCOMES,
        versions=[v.version for v in versions if v.version is not None],
    )


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: str, store: StoreDep, caller: CallerDep) -> HTMLResponse:
    """A run's summary, tool steps and grade; a screened run's evidence as anyone may
    see it (grader, score, HTTP status), the rest through the owner's key (the script)."""
    run = run_views.run_detail(store, caller, run_id)  # redacted as the API redacts
    agent = store.agent(run.agent_id)
    facts, stored = None, store.run(run.id) if run.screening_id is not None else None
    if stored is not None:
        facts = evidence_views.root_facts(store, stored)
        if facts is not None and not run.owner_view:
            facts = evidence_views.public_facts(facts)
    return page(
        "run.html",
        title=f"Run {run.id}",
        run=run,
        agent=agent,
        open_traces=caller.open,
        graded=run.success_source == "graded",
        facts=facts,
        terminal=run.status in policy.TERMINAL_STATUSES,
    )
