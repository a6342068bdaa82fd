"""/api/v1/agents/{id}/versions, /compare, /diagnostics: the improvement loop
(api.views.loop; docs/loop.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from api.deps import Cursor, FilterDep, PageSize, StoreDep
from api.errors import error
from api.loop_schemas import Compare, Diagnostics, VersionList
from api.views import loop as views
from scoring import policy

router = APIRouter(prefix="/api/v1/agents", tags=["loop"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: error("unknown agent")}


@router.get("/{agent_id}/versions", response_model=VersionList, responses=NOT_FOUND)
def versions(
    agent_id: str, store: StoreDep, page_size: PageSize = 50, cursor: Cursor = None
) -> VersionList:
    """Each version of the agent with its runs and canonical composite, a page
    at a time (an agent that stamps every run with a new version has tens of
    thousands)."""
    return views.versions(store, agent_id, page_size, cursor)


@router.get(
    "/{agent_id}/compare",
    response_model=Compare,
    # Unset fields are left out: `pairs` and `needed` appear only when asked for.
    response_model_exclude_unset=True,
    responses={**NOT_FOUND, 422: error("a side has no terminal run, or fewer than two versions")},
)
def compare(
    agent_id: str,
    store: StoreDep,
    base: Annotated[
        str | None, Query(description="the version before (`none`: runs without one)")
    ] = None,
    head: Annotated[str | None, Query(description="the version after; default: the newest")] = None,
    evidence: Annotated[
        bool, Query(description="add each axis's paired tasks and what a missing verdict lacks")
    ] = False,
    base_screening: Annotated[
        str | None, Query(description="a screening's runs as the side before, instead of `base`")
    ] = None,
    head_screening: Annotated[
        str | None, Query(description="a screening's runs as the side after, instead of `head`")
    ] = None,
    min_effect: Annotated[
        float,
        Query(
            description="axis points a significant change must also move by to be `regressed` "
            "or `improved` (a finite number >= 0; default 0)"
        ),
    ] = policy.COMPARE_MIN_EFFECT,
) -> Compare:
    """Did head do better or worse than base, on which axis, beyond noise?

    Without `base` and `head`: the two newest versions (head the newest).
    A side may be a screening instead (docs/screening.md). Tasks are paired
    per axis when at least 5 match; Holm corrects across axes.
    """
    return views.compare(
        store,
        agent_id,
        base=base,
        head=head,
        evidence=evidence,
        base_screening=base_screening,
        head_screening=head_screening,
        min_effect=min_effect,
    )


@router.get("/{agent_id}/diagnostics", response_model=Diagnostics, responses=NOT_FOUND)
def diagnostics(
    agent_id: str,
    store: StoreDep,
    where: FilterDep,
    limit: Annotated[int, Query(ge=1, le=100, description="offenders per axis")] = 10,
) -> Diagnostics:
    """The weakest axis, and what costs each axis its points (the fitness cohort)."""
    return views.diagnostics(store, agent_id, where, limit)
