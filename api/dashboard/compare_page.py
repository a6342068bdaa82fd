"""The compare page: two versions, two screenings, or one of each (docs/dashboard.md).

Its address takes the API's own parameters (`base`, `head`, `base_screening`,
`head_screening`, `min_effect`), so a page and `GET /api/v1/agents/{id}/compare`
with the same query say the same. The picker lists screenings beside versions in one
list per side; a pick (`before=v:1.2`, `after=s:nightly-7`) is redirected to
those parameters, so every compare has one address, and no script is needed.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.dashboard.charts import AXES, radar_shape
from api.dashboard.pages import page
from api.deps import StoreDep
from api.ports import ScreeningInfo
from api.problems import Invalid
from api.views import agents as agent_views
from api.views import loop as loop_views
from scoring import policy

router = APIRouter(include_in_schema=False)
PICKED_SCREENINGS = 100  # the newest screenings the picker offers
Name = Annotated[str | None, Query(max_length=500)]
# Any id a run's root named, as the API's compare takes it (SCREEN.md's 64
# characters bound only the ids `screen` makes; the screening page links here).
Screening = Annotated[str | None, Query()]


@router.get("/agents/{agent_id}/compare", response_class=HTMLResponse)
def compare_page(
    agent_id: str,
    store: StoreDep,
    base: Name = None,
    head: Name = None,
    base_screening: Screening = None,
    head_screening: Screening = None,
    before: Name = None,
    after: Name = None,
    min_effect: Annotated[str | None, Query(max_length=32)] = None,
) -> Response:
    """Both radars, each axis's verdict and its paired tasks, the tasks that moved."""
    agent = agent_views.agent(store, agent_id)
    least = (min_effect or "").strip()
    if before or after:
        return RedirectResponse(_address(agent.id, before, after, least), status_code=303)
    versions = loop_views.versions(store, agent.id).items
    screenings = store.screenings(agent.id)
    names = [loop_views.NULL_VERSION if v.version is None else v.version for v in versions]
    sides = {
        "base": base or None,
        "head": head or None,
        "base_screening": base_screening or None,
        "head_screening": head_screening or None,
    }
    result, problem = None, None
    try:
        _fill_defaults(sides, names, screenings)
        result = loop_views.compare(
            store,
            agent.id,
            base=sides["base"],
            head=sides["head"],
            evidence=True,
            base_screening=sides["base_screening"],
            head_screening=sides["head_screening"],
            min_effect=_points(least),
        )
    except Invalid as exc:  # a side that cannot be compared: said on the page
        problem = exc.detail
    radars = None
    if result is not None:
        base_values = {axis: result.axes[axis].base for axis in AXES}
        head_values = {axis: result.axes[axis].head for axis in AXES}
        radars = (radar_shape(base_values, {}), radar_shape(head_values, {}))
    by_id = {s.screening_id: s for s in screenings}
    offered = screenings[:PICKED_SCREENINGS]
    for chosen in (sides["base_screening"], sides["head_screening"]):
        if chosen in by_id and by_id[chosen] not in offered:
            offered.append(by_id[chosen])
    return page(
        "compare.html",
        title=f"Compare {agent.name}",
        agent=agent,
        names=names,
        screenings=offered,
        base=_pick(sides["base"], sides["base_screening"]),
        head=_pick(sides["head"], sides["head_screening"]),
        base_label=_label(sides["base"], sides["base_screening"], by_id),
        head_label=_label(sides["head"], sides["head_screening"], by_id),
        base_screening=sides["base_screening"],
        head_screening=sides["head_screening"],
        min_effect=least,
        suggested_min_effect=policy.COMPARE_GATE_MIN_EFFECT,
        result=result,
        problem=problem,
        radars=radars,
        moved=[t for t in result.tasks if t.change != "same"] if result else [],
    )


def _points(text: str) -> float:
    """The page's min_effect field: empty is the API's default."""
    if not text:
        return policy.COMPARE_MIN_EFFECT
    try:
        return float(text)
    except ValueError:
        raise Invalid(f"min_effect must be a finite number >= 0, not {text!r}") from None


def _address(agent_id: str, before: str | None, after: str | None, min_effect: str) -> str:
    """The canonical address of a pick: `v:NAME` a version, `s:ID` a screening."""
    query: dict[str, str] = {}
    for side, picked in (("base", before), ("head", after)):
        if not picked:
            continue
        kind, _, value = picked.partition(":")
        if kind not in ("v", "s") or not value:
            raise Invalid(f"pick a version (v:NAME) or a screening (s:ID), not {picked!r}")
        query[side if kind == "v" else f"{side}_screening"] = value
    if min_effect:
        query["min_effect"] = min_effect
    return f"/agents/{agent_id}/compare?{urlencode(query)}"


def _fill_defaults(
    sides: dict[str, str | None], names: list[str], screenings: list[ScreeningInfo]
) -> None:
    """Name every side. Nothing given: the two newest versions, else (an agent with
    fewer) its two newest screenings. One side given: the other is the newest
    version that is not it, as the API does."""
    given = [value for value in sides.values() if value is not None]
    if not given:
        if len(names) >= 2 or len(screenings) < 2:
            sides["base"], sides["head"] = loop_views.default_sides(list(names), None, None)
        else:
            sides["base_screening"] = screenings[1].screening_id
            sides["head_screening"] = screenings[0].screening_id
        return
    for side in ("base", "head"):
        other = sides["head" if side == "base" else "base"]
        if sides[side] is None and sides[f"{side}_screening"] is None:
            sides[side] = next((n for n in names if n != other), None)
            if sides[side] is None:
                raise Invalid("the agent has no other version to compare with")


def _pick(version: str | None, screening: str | None) -> str:
    """The picker's value for a side."""
    if screening is not None:
        return f"s:{screening}"
    return f"v:{version}" if version is not None else ""


def _label(version: str | None, screening: str | None, by_id: dict[str, ScreeningInfo]) -> str:
    """A side as the page names it: the version, or the screening and its version."""
    if screening is None:
        return version or "–"
    info = by_id.get(screening)
    ran = f" ({info.version})" if info is not None and info.version else ""
    return f"screening {screening}{ran}"
