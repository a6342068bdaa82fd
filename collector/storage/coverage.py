"""An agent's coverage: which of its spans the conventions recognised
(CONVENTIONS.md section 6), over its newest runs, in four statements.

The headline is the runs' own counts (`span_count`, `unrecognised_spans`,
as assembly made them), one read of the agent's newest 1,000 runs. For the
detail, each span row keeps the label of what recognised it (`rule`: a
convention's rule, a convention that knows the span, or `unrecognised`), so
nothing is re-assembled: the spans of those runs' traces that name the agent
are grouped in SQL, by (scope, role, label) and, the unrecognised ones, by
(scope, span name); the runs' roots, never unrecognised, are read by their
ids (1,000 index probes) and taken off in Python, which only folds groups.
That spans are "the run's" when they name its agent holds for the whole run
unless a `badge.run.id` span claims another service's spans (docs/runs.md
"Who owns what").

Every statement reaches spans through their trace number (the unique index
`ux_spans_identity`), a PostgreSQL store without statistics included: roots
looked up among the spans by an anti-join instead made that planner compare
each unrecognised span with every root (1.3 s for 1,000 x 50 spans).

Measured (bench/coverage.py: the newest 1,000 of 2,000 runs x 50 spans, a
fifth unrecognised; medians of 30 calls on 2 cores shared with other work,
load 4-6): SQLite 86 ms (GET .../coverage 76 ms), PostgreSQL 15 63 ms (GET
67 ms); the totals alone (`detail=False`) 1.3 and 1.4 ms, so /diagnostics of
an agent with nothing to warn about takes 4-5 ms. PostgreSQL without
statistics, 8,000 runs of the agent: 0.12 s; with them, when the agent's
spans are the whole table (400,000), its planner reads them all (0.23 s), as
it would not in a store of many agents.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import CTE, ColumnElement, and_, case, desc, func, literal_column, select

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
    # A run stored before conventions (unrecognised_spans null) counts in neither sum.
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
    return _detail(session, newest, agent_id, figures)


def _detail(session: SqlSession, newest: CTE, agent_id: str, figures: Coverage) -> Coverage:
    """The spans of the newest runs' traces that name the agent, by scope."""
    # One row per trace (several runs of the agent may share one), with the
    # smallest run id as the example a reader can open.
    traces = (
        select(newest.c.trace_ref, func.min(newest.c.id).label("run_id"))
        .group_by(newest.c.trace_ref)
        .cte("newest_traces")
    )
    in_traces = traces.join(spans, spans.c.trace_ref == traces.c.trace_ref)
    mine = spans.c.agent_id == agent_id
    unrecognised = spans.c.rule == _UNRECOGNISED
    group = (spans.c.scope_name, spans.c.role, spans.c.rule)
    roots = (
        select(*group, spans.c.name, func.count().label("spans"))
        .select_from(
            newest.join(
                spans,
                and_(
                    spans.c.trace_ref == newest.c.trace_ref,
                    spans.c.span_id == newest.c.root_span_id,
                ),
            )
        )
        .where(mine, unrecognised)
        .group_by(*group, spans.c.name)
    )
    root_rows = session.execute(roots).all()
    by_label = (
        select(
            *group,
            func.count().label("spans"),
            func.sum(case((unrecognised, 1), else_=0)).label("unrecognised"),
        )
        .select_from(in_traces)
        .where(mine)
        .group_by(*group)
    )
    counted = func.count().label("spans")
    # A root takes at most its own pair down: the top TOP_NAMES pairs once
    # roots are off are among the top TOP_NAMES + (pairs roots have) before.
    by_name = (
        select(spans.c.scope_name, spans.c.name, counted, func.min(traces.c.run_id).label("run_id"))
        .select_from(in_traces)
        .where(mine, unrecognised)
        .group_by(spans.c.scope_name, spans.c.name)
        .order_by(desc(counted), spans.c.scope_name, spans.c.name)
        .limit(TOP_NAMES + len(root_rows))
    )
    names = _names(session.execute(by_name).all(), root_rows)
    return _folded(figures, session.execute(by_label).all(), root_rows, names)


def _names(rows: Iterable[Any], root_rows: Iterable[Any]) -> list[UnrecognisedName]:
    """The most frequent unrecognised (scope, name) pairs, roots taken off."""
    roots: Counter[tuple[str, str]] = Counter()
    for root in root_rows:
        roots[(root.scope_name, root.name)] += int(root.spans)
    found = [
        UnrecognisedName(r.scope_name, r.name, left, str(r.run_id))
        for r in rows
        if (left := int(r.spans) - roots[(r.scope_name, r.name)]) > 0
    ]
    found.sort(key=lambda n: (-n.spans, n.scope, n.name))
    return found[:TOP_NAMES]


def _folded(
    figures: Coverage,
    groups: Sequence[Any],
    root_rows: Iterable[Any],
    names: list[UnrecognisedName],
) -> Coverage:
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
    for root in root_rows:  # CONVENTIONS.md section 4: a run's root is never unrecognised
        missed[root.scope_name] -= int(root.spans)
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
