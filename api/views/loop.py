"""An agent's versions, the compare of two sides, and diagnostics: the improvement loop.

Screen, find the weakest axis and the runs behind it, change one thing,
re-screen, and compare the two versions (docs/loop.md). Every number comes
from the scoring core over the store's runs, as the other views do.
"""

from __future__ import annotations

from dataclasses import asdict

import scoring
from api.coverage_schemas import CoverageWarning
from api.loop_schemas import (
    AxisCompare,
    AxisDiagnosis,
    Compare,
    CompareSide,
    CompositeCompare,
    Diagnostics,
    RunOffender,
    TaskCompare,
    TaskOffender,
    VersionItem,
    VersionList,
)
from api.ports import CohortRun, ReadStore, RunFilter
from api.problems import Invalid
from api.render import encode_cursor, page_offset, rfc3339
from api.views import coverage as coverage_views
from api.views.agents import find_agent

NULL_VERSION = "none"  # in compare: the runs that carry no version


def versions(
    store: ReadStore, agent_id: str, page_size: int = 50, cursor: str | None = None
) -> VersionList:
    """Each version of the agent with its runs and canonical composite, a page
    at a time (an agent that stamps every run with a new version has tens of
    thousands)."""
    agent = find_agent(store, agent_id)
    found = store.versions(agent.id)
    start = page_offset(cursor) if cursor else 0
    more = start + page_size < len(found)
    return VersionList(
        next_cursor=encode_cursor(str(start + page_size)) if more else None,
        items=[
            VersionItem(
                version=v.version,
                total_runs=v.total_runs,
                completed_runs=v.completed_runs,
                successful_runs=v.successful_runs,
                first_run_at=rfc3339(v.first_run_at),
                last_run_at=rfc3339(v.last_run_at),
                composite_score=v.composite.composite_score if v.composite else None,
            )
            for v in found[start : start + page_size]
        ],
    )


def compare(
    store: ReadStore,
    agent_id: str,
    *,
    base: str | None = None,
    head: str | None = None,
    evidence: bool = False,
    base_screening: str | None = None,
    head_screening: str | None = None,
    min_effect: float = scoring.policy.COMPARE_MIN_EFFECT,
) -> Compare:
    """Did head do better or worse than base, on which axis, beyond noise?

    Without `base` and `head`: the two newest versions (head the newest).
    A side may be a screening instead (docs/screening.md). Tasks are paired
    per axis when at least 5 match; Holm corrects across axes. A significant
    change smaller than `min_effect` axis points is `unchanged`.
    """
    try:
        least = scoring.validate_min_effect(min_effect)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    agent = find_agent(store, agent_id)
    for version, screening, side in (
        (base, base_screening, "base"),
        (head, head_screening, "head"),
    ):
        if version is not None and screening is not None:
            raise Invalid(f"give {side} or {side}_screening, not both")
    if (base is None and base_screening is None) or (head is None and head_screening is None):
        names = [v.version for v in store.versions(agent.id)]
        base, head = _defaults(names, base, head, base_screening, head_screening)
    before = _screening_side(store, agent.id, base_screening) or _version_side(
        store, agent.id, base
    )
    after = _screening_side(store, agent.id, head_screening) or _version_side(store, agent.id, head)
    result = scoring.compare_versions(before[0], after[0], least)
    return Compare(
        agent_id=agent.id,
        base=_side(before[1], result.base),
        head=_side(after[1], result.head),
        axes={axis: axis_compare(change, evidence) for axis, change in result.axes.items()},
        composite=CompositeCompare.model_validate(result.composite, from_attributes=True),
        tasks=[TaskCompare.model_validate(t, from_attributes=True) for t in result.tasks],
        regressed=result.regressed,
        min_effect=least,
    )


def axis_compare(change: scoring.AxisChange, evidence: bool) -> AxisCompare:
    """An axis as docs/loop.md reports it, with the paired tasks when asked."""
    fields = {name: getattr(change, name) for name in SPECIFIED_AXIS_FIELDS}
    if evidence:
        fields["pairs"] = [asdict(pair) for pair in change.pairs]
        fields["needed"] = change.needed
    return AxisCompare.model_validate(fields)


SPECIFIED_AXIS_FIELDS = (
    "base",
    "head",
    "delta",
    "verdict",
    "test",
    "paired_tasks",
    "p_value",
    "p_adjusted",
)


def diagnostics(store: ReadStore, agent_id: str, where: RunFilter, limit: int = 10) -> Diagnostics:
    """The weakest axis, and what costs each axis its points (the fitness cohort)."""
    agent = find_agent(store, agent_id)
    warning = coverage_views.coverage_warning(store, agent.id)
    return diagnostics_of(agent.id, store.cohort(agent.id, where), limit, warning)


def diagnostics_of(
    agent_id: str,
    cohort: list[CohortRun],
    limit: int,
    coverage_warning: CoverageWarning | None = None,
) -> Diagnostics:
    """/diagnostics from the fitness cohort (with each run's version), and the
    coverage warning (api.views.coverage: over the agent's newest runs, the
    version filter aside, as CONVENTIONS.md section 6 counts them)."""
    known = {run.record.id: run for run in cohort}
    result = scoring.diagnose([run.record for run in cohort], limit)
    axes: dict[str, AxisDiagnosis] = {}
    for axis, found in result.axes.items():
        offenders: list[RunOffender] | list[TaskOffender]
        if axis == "robustness":
            offenders = [
                TaskOffender.model_validate(o, from_attributes=True)
                for o in found.offenders
                if isinstance(o, scoring.TaskOffender)
            ]
        else:
            offenders = [
                RunOffender(
                    run_id=o.run_id,
                    task_id=o.task_id,
                    version=known[o.run_id].version,
                    value=o.value,
                    ended_at=rfc3339(known[o.run_id].ended_at),
                    terminal_at=rfc3339(o.ended_at.timestamp()) if o.ended_at else None,
                )
                for o in found.offenders
                if isinstance(o, scoring.RunOffender)
            ]
        axes[axis] = AxisDiagnosis(score=found.score, offenders=offenders)
    return Diagnostics(
        agent_id=agent_id,
        weakest_axis=result.weakest_axis,
        axes=axes,
        coverage_warning=coverage_warning,
    )


def default_sides(
    newest_first: list[str | None], base: str | None, head: str | None
) -> tuple[str, str]:
    """What is not named: head the newest version, base the newest other one."""
    names = [_name(v) for v in newest_first]
    if head is None:
        head = next((v for v in names if v != base), None)
    if base is None:
        base = next((v for v in names if v != head), None)
    if base is None or head is None:
        raise Invalid("the agent has fewer than two versions to compare")
    return base, head


def _name(version: str | None) -> str:
    return NULL_VERSION if version is None else version


def _defaults(
    names: list[str | None],
    base: str | None,
    head: str | None,
    base_screening: str | None,
    head_screening: str | None,
) -> tuple[str | None, str | None]:
    """Versions for the sides not named; a side given as a screening stays so."""
    if base_screening is None and head_screening is None:
        return default_sides(names, base, head)
    named = [_name(v) for v in names]
    if base_screening is None and base is None:
        base = next((v for v in named if v != head), None)
        if base is None:
            raise Invalid("the agent has no version to compare the screening with")
    if head_screening is None and head is None:
        head = next((v for v in named if v != base), None)
        if head is None:
            raise Invalid("the agent has no version to compare the screening with")
    return base, head


def _version_side(
    store: ReadStore, agent_id: str, name: str | None
) -> tuple[scoring.Version, str | None]:
    """One side by version: 422 when it has no terminal run (an unknown version included)."""
    assert name is not None  # _defaults named every side that is no screening
    where = RunFilter(null_version=True) if name == NULL_VERSION else RunFilter(version=name)
    version = None if name == NULL_VERSION else name
    return _of(store, agent_id, where, f"version {name!r}"), version


def _screening_side(
    store: ReadStore, agent_id: str, screening: str | None
) -> tuple[scoring.Version, str | None] | None:
    """One side by screening (its version is the one its runs ran)."""
    if screening is None:
        return None
    where = RunFilter(screening=screening)
    found = next((s for s in store.screenings(agent_id) if s.screening_id == screening), None)
    version = found.version if found is not None else None
    return _of(store, agent_id, where, f"screening {screening!r}"), version


def _of(store: ReadStore, agent_id: str, where: RunFilter, what: str) -> scoring.Version:
    cohort = store.radar_runs(agent_id, where)
    if not cohort:
        raise Invalid(f"{what} has no finished run")
    scores = store.scores(agent_id, where)
    return scoring.Version(cohort, scores.composite, scores.repeatability)


def _side(version: str | None, side: scoring.Side) -> CompareSide:
    return CompareSide.model_validate({**asdict(side), "version": version})
