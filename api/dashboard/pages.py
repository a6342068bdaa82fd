"""The dashboard's pages: the loop of docs/loop.md, in a browser.

Every number on a page comes from the read API's own route functions (the
same code that answers `/api/v1/...`, called directly), so a page and the
JSON never disagree. Pages are rendered on the server; the small script in
static/ only re-ranks the board, submits pickers and loads a trace with the
key the viewer types (kept in memory, sent as a header, never stored).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

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
from api.render import rfc3339
from api.routes import agents as agent_routes
from api.routes import loop as loop_routes
from api.routes import runs as run_routes
from scoring import policy

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
router = APIRouter(include_in_schema=False)

BOARD_LIMIT = 100  # rows the leaderboard shows
TREND_RUNS = 1000  # the sparkline covers at most this many latest completed runs
TREND_POINTS = 12
OFFENDERS = 5
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


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _number
    env.filters["when"] = _when
    env.globals["axis_labels"] = AXIS_LABELS
    env.globals["test_labels"] = TEST_LABELS
    env.globals["pair_labels"] = PAIR_LABELS
    env.globals["scoring_policy"] = policy.SCORING_POLICY
    return env


_ENV = _environment()


def page(name: str, code: int = 200, **context: Any) -> HTMLResponse:
    html = _ENV.get_template(name).render(**context)
    return HTMLResponse(html, status_code=code, headers=SECURITY_HEADERS)


@contextmanager
def shown_as_page() -> Iterator[None]:
    """An HTTPException of a route function (unknown agent, bad cursor) is
    shown as an HTML page with the same status, not as JSON."""
    try:
        yield
    except HTTPException as exc:
        raise _PageError(exc.status_code, str(exc.detail)) from None


class _PageError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def error_page(status: int, detail: str) -> HTMLResponse:
    return page("error.html", status, title=str(status), status=status, detail=detail)


def _guarded(handler: Callable[..., HTMLResponse]) -> Callable[..., HTMLResponse]:
    """A page handler whose route-function errors become HTML error pages."""

    @functools.wraps(handler)
    def run(*args: Any, **kwargs: Any) -> HTMLResponse:
        try:
            return handler(*args, **kwargs)
        except _PageError as exc:
            return error_page(exc.status, exc.detail)

    return run


def _where(version: str | None) -> RunFilter:
    """The version picker: empty = every run; `none` = runs without a version
    (as in compare)."""
    if not version:
        return ALL_RUNS
    if version == loop_routes.NULL_VERSION:
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
            raise _PageError(422, f"the {axis} weight must be a number") from None
    try:
        return scoring.validate_weights(weights)
    except ValueError as exc:
        raise _PageError(422, f"bad weights: {exc}") from None


@router.get("/", response_class=HTMLResponse)
@_guarded
def leaderboard(
    request: Request,
    store: StoreDep,
    all: Annotated[bool, Query()] = False,
) -> HTMLResponse:
    """The API's leaderboard, with each agent's success rate and verified state
    (what /stats says, from the same sums) and its composite over time. Viewer
    weights re-rank it by the weighted radar, for this request only."""
    weights = _viewer_weights(request)
    with shown_as_page():
        ranked = agent_routes.ranked_agents(store, all)
        graded = store.graded_counts()
        weighted: dict[str, float | None] = {}
        if weights is not None:
            for _, agent in ranked:
                weighted[agent.id] = scoring.radar(
                    store.radar_runs(agent.id), weights
                ).composite_score
            order = {agent.id: rank for rank, (_, agent) in enumerate(ranked)}
            ranked.sort(
                key=lambda item: (
                    weighted[item[1].id] is None,
                    -(weighted[item[1].id] or 0.0),
                    order[item[1].id],
                )
            )
        rows = []
        for composite, agent in ranked[:BOARD_LIMIT]:
            completed = composite.completed_runs if composite else 0
            trend = scoring.composite_trend(
                store.completed_runs(agent.id, TREND_RUNS), TREND_POINTS
            )
            rows.append(
                {
                    "agent": agent,
                    "composite": composite.composite_score if composite else None,
                    "success_rate": composite.success_rate if composite else None,
                    "verified": scoring.verified_state(completed, graded.get(agent.id, 0)),
                    "last_run_at": rfc3339(agent.last_run_at),
                    "weighted": weighted.get(agent.id),
                    "trend": sparkline(trend),
                }
            )
    sliders = [{"axis": axis, "label": AXIS_LABELS[axis], "value": 1.0} for axis in AXES]
    if weights is not None:  # shown as set, on the sliders' 0-5 scale
        top = max(weights.values()) or 1.0
        for slider in sliders:
            slider["value"] = round(5 * weights[str(slider["axis"])] / top, 1)
    return page(
        "leaderboard.html",
        title="Leaderboard",
        rows=rows,
        total=len(ranked),
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
@_guarded
def overview(
    agent_id: str,
    store: StoreDep,
    caller: CallerDep,
    saved: WeightsDep,
    version: Annotated[str | None, Query(max_length=500)] = None,
) -> HTMLResponse:
    """The composite and its arithmetic, the radar, pass^k and what to fix:
    /stats, /fitness, /reliability and /diagnostics from one pass over the
    runs and one read of the cohort."""
    where = _where(version)
    with shown_as_page():
        agent = agent_routes.get_agent(agent_id, store)
        versions = loop_routes.versions(agent_id, store).items
        scores = store.scores(agent_id, where)
        stats = agent_routes.stats_of(agent_id, scores.counts, scores.composite)
        cohort = store.cohort(agent_id, where)
        owner = caller.personal()
        mine = saved.radar_weights(owner) if owner is not None else None
        canonical = scores.composite if where == ALL_RUNS else store.composite(agent_id)
        fitness = agent_routes.fitness_of([run.record for run in cohort], mine, canonical)
        reliability = agent_routes.reliability_of(scores.repeatability)
        diagnosis = loop_routes.diagnostics_of(agent_id, cohort, OFFENDERS)
        composite = scores.composite
    values = {axis: getattr(fitness, axis) for axis in AXES}
    return page(
        "agent.html",
        title=agent.name,
        agent=agent,
        version=version or "",
        versions=versions,
        null_version=loop_routes.NULL_VERSION,
        stats=stats,
        fitness=fitness,
        shape=radar_shape(values, fitness.evidence_needed),
        reliability=reliability,
        diagnosis=diagnosis,
        terms=_arithmetic(composite),
        zero_floor=composite is not None and composite.successful_runs == 0,
    )


@router.get("/agents/{agent_id}/runs", response_class=HTMLResponse)
@_guarded
def evidence(
    agent_id: str,
    store: StoreDep,
    status: Annotated[str | None, Query(max_length=20)] = None,
    outcome: Annotated[str | None, Query(max_length=20)] = None,
    task: Annotated[str | None, Query(max_length=500)] = None,
    version: Annotated[str | None, Query(max_length=500)] = None,
    cursor: Cursor = None,
) -> HTMLResponse:
    status = status or None
    outcome = outcome if outcome in OUTCOMES else None
    with shown_as_page():
        agent = agent_routes.get_agent(agent_id, store)
        versions = loop_routes.versions(agent_id, store).items
        listed = run_routes.list_runs(
            store,
            agent_id=agent.id,
            task_id=task or None,
            version=version or None,
            status=status if status in STATUSES else None,
            outcome=outcome,  # type: ignore[arg-type]
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
@_guarded
def run_page(run_id: str, store: StoreDep, caller: CallerDep) -> HTMLResponse:
    with shown_as_page():
        run = run_routes.get_run(run_id, store)
    agent = store.agent(run.agent_id)
    return page(
        "run.html",
        title=f"Run {run.id}",
        run=run,
        agent=agent,
        open_traces=caller.open,
        graded=run.success_source == "graded",
    )


@router.get("/agents/{agent_id}/compare", response_class=HTMLResponse)
@_guarded
def compare_page(
    agent_id: str,
    store: StoreDep,
    base: Annotated[str | None, Query(max_length=500)] = None,
    head: Annotated[str | None, Query(max_length=500)] = None,
) -> HTMLResponse:
    with shown_as_page():
        agent = agent_routes.get_agent(agent_id, store)
        versions = loop_routes.versions(agent_id, store).items
    names = [loop_routes.NULL_VERSION if v.version is None else v.version for v in versions]
    result, problem = None, None
    try:
        sides = loop_routes.default_sides([v.version for v in versions], base or None, head or None)
        result = loop_routes.compare(agent_id, store, *sides, evidence=True)
    except HTTPException as exc:
        problem = str(exc.detail)
    radars = None
    if result is not None:
        base_values = {axis: result.axes[axis].base for axis in AXES}
        head_values = {axis: result.axes[axis].head for axis in AXES}
        radars = (radar_shape(base_values, {}), radar_shape(head_values, {}))
    return page(
        "compare.html",
        title=f"Compare {agent.name}",
        agent=agent,
        names=names,
        base=result.base.version if result else (base or ""),
        head=result.head.version if result else (head or ""),
        result=result,
        problem=problem,
        radars=radars,
        moved=[t for t in result.tasks if t.change != "same"] if result else [],
    )
