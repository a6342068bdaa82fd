"""An agent's coverage: which of its spans the conventions recognised
(CONVENTIONS.md section 6), over its newest runs, in two statements.

Each span row keeps the label of what recognised it (`rule`: a convention's
rule, a convention that knows the span, or `unrecognised`), so nothing is
re-assembled: the spans of the traces of the agent's newest 1,000 runs are
grouped in SQL, once by (scope, role, label) and once by (scope, span name)
for the unrecognised ones; Python only folds the few groups. A run's spans
are taken as the spans of its trace that name its agent, which is the whole
run unless a `badge.run.id` span claims another service's spans
(docs/runs.md "Who owns what"); the run's root is never unrecognised.

Measured (bench/coverage.py, 1,000 runs x 50 spans, 20% unrecognised, 2
cores shared): MEASURE-ME.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import CTE, ColumnElement, Select, and_, case, desc, func, literal_column, select

from api.ports import Coverage, ScopeCoverage, UnrecognisedName
from collector.conventions import UNRECOGNISED, RuleLabel
from collector.storage.session import SqlSession
from collector.storage.tables import runs, spans

NEWEST_RUNS = 1_000  # CONVENTIONS.md section 6: over the agent's newest 1,000 runs
TOP_NAMES = 20  # ... and its 20 most frequent unrecognised (scope, span name) pairs
# A literal, not a bound value: the one label the grouping tests for.
_UNRECOGNISED: ColumnElement[str] = literal_column(f"'{UNRECOGNISED}'")


def coverage_of(session: SqlSession, agent_id: str, detail: bool = True) -> Coverage:
    """The agent's spans over its newest runs; with `detail`, by scope, role
    and convention, and the most frequent unrecognised span names."""
    newest = (
        select(
            runs.c.id,
            runs.c.trace_ref,
            runs.c.root_span_id,
            runs.c.span_count,
            runs.c.unrecognised_spans,
        )
        .where(runs.c.agent_id == agent_id, runs.c.trace_ref.is_not(None))
        .order_by(runs.c.started_ns.desc(), runs.c.id.desc())
        .limit(NEWEST_RUNS)
        .cte("newest")
    )
    # The headline is the runs' own counts, as assembly made them: a run
    # stored before conventions (unrecognised_spans null) counts in neither sum.
    classified = newest.c.unrecognised_spans.is_not(None)
    totals = select(
        func.count(),
        func.coalesce(func.sum(case((classified, newest.c.span_count), else_=0)), 0),
        func.coalesce(func.sum(newest.c.unrecognised_spans), 0),
    ).select_from(newest)
    run_count, span_count, unrecognised_count = tuple(session.execute(totals).one())
    figures = Coverage(int(run_count), int(span_count), int(unrecognised_count), (), ())
    if not detail or not run_count:
        return figures
    by_label, by_name = _detail_statements(newest, agent_id)
    names = [
        UnrecognisedName(r.scope_name, r.name, int(r.spans), str(r.run_id))
        for r in session.execute(by_name)
    ]
    return _folded(figures, session.execute(by_label).all(), names)


def _detail_statements(newest: CTE, agent_id: str) -> tuple[Select[Any], Select[Any]]:
    """The spans of the newest runs' traces that name the agent, grouped by
    (scope, role, label), and the unrecognised ones by (scope, span name)."""
    # One row per trace (several runs of the agent may share one), with the
    # smallest run id as the example a reader can open.
    traces = (
        select(newest.c.trace_ref, func.min(newest.c.id).label("run_id"))
        .group_by(newest.c.trace_ref)
        .cte("newest_traces")
    )
    roots = (
        select(newest.c.trace_ref, newest.c.root_span_id)
        .where(newest.c.root_span_id.is_not(None))
        .distinct()
        .cte("newest_roots")
    )
    # Only an unrecognised span is looked up among the roots.
    joined = traces.join(spans, spans.c.trace_ref == traces.c.trace_ref).outerjoin(
        roots,
        and_(
            spans.c.rule == _UNRECOGNISED,
            roots.c.trace_ref == spans.c.trace_ref,
            roots.c.root_span_id == spans.c.span_id,
        ),
    )
    unrecognised = and_(spans.c.rule == _UNRECOGNISED, roots.c.root_span_id.is_(None))
    by_label = (
        select(
            spans.c.scope_name,
            spans.c.role,
            spans.c.rule,
            func.count().label("spans"),
            func.sum(case((unrecognised, 1), else_=0)).label("unrecognised"),
        )
        .select_from(joined)
        .where(spans.c.agent_id == agent_id)
        .group_by(spans.c.scope_name, spans.c.role, spans.c.rule)
    )
    counted = func.count().label("spans")
    by_name = (
        select(spans.c.scope_name, spans.c.name, counted, func.min(traces.c.run_id).label("run_id"))
        .select_from(joined)
        .where(spans.c.agent_id == agent_id, unrecognised)
        .group_by(spans.c.scope_name, spans.c.name)
        .order_by(desc(counted), spans.c.scope_name, spans.c.name)
        .limit(TOP_NAMES)
    )
    return by_label, by_name


def _folded(figures: Coverage, groups: Sequence[Any], names: list[UnrecognisedName]) -> Coverage:
    """(scope, role, label) groups -> one entry per scope, most unrecognised first."""
    totals: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    roles: dict[str, Counter[str]] = defaultdict(Counter)
    conventions: dict[str, Counter[str]] = defaultdict(Counter)
    for scope, role, rule, count, unrecognised in groups:
        totals[scope] += int(count)
        missed[scope] += int(unrecognised or 0)
        roles[scope][role] += int(count)
        convention = RuleLabel.parse(rule).convention
        if convention is not None:
            conventions[scope][convention] += int(count)
    scopes = [
        ScopeCoverage(
            scope=scope,
            spans=totals[scope],
            unrecognised=missed[scope],
            roles=dict(sorted(roles[scope].items())),
            conventions=dict(sorted(conventions[scope].items(), key=lambda kv: (-kv[1], kv[0]))),
        )
        for scope in sorted(totals, key=lambda s: (-missed[s], -totals[s], s))
    ]
    return replace(figures, scopes=scopes, unrecognised_names=names)
