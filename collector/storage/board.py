"""The leaderboard, kept per agent by the sweeper (migration 0017).

Ranking every agent on a request cost one query per agent (the re-ranked
board read each agent's radar cohort: 90 s at 100,000 agents, and it went on
after the client left). Here each agent's board row holds what the board
shows and ranks by: counts, the headline composite, the five radar axes,
the composite over time. A run change marks its agent in `board_stale`
(the session's `fold_run_deltas`); `refresh_board` recomputes at most
`REFRESH_PER_STEP` marked agents per sweep from the kept sums and the
agent's cohort. A page of the board, in canonical order or re-ranked by any
weights, is then one query. An agent the board does not list yet is entered
by the commit that writes its runs (`enter_new_agents`), so it is listed as
soon as they are visible.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Float, Numeric, case, cast, delete, func, literal, select
from sqlalchemy.engine import Connection

import scoring
from api.ports import ALL_RUNS, BoardRow
from collector.storage import kept_totals
from collector.storage.rows import RunRow
from collector.storage.run_records import cohort_rows, record_of
from collector.storage.session import SqlSession, in_chunks
from collector.storage.tables import agent_board, agents, board_stale, runs
from collector.storage.totals import composite_of, counts_of
from scoring import policy

REFRESH_PER_STEP = 200  # agents refreshed per sweep: a sweep's work stays bounded
# Agents a run commit enters whole on the board (enter_new_agents), radar and
# trend included: ~6.5 ms of queries each on a loaded two-core machine, so
# 200 of them held a commit, and the runs in it, 1.2-1.4 s past RUNS.md's 1 s
# (measured at 1,000 new agents, both databases). The rest are entered with
# their headline figures only: 1,000 of those took 38 ms (SQLite), 142 ms
# (PostgreSQL), the radar and trend following at the next sweep.
ENTER_PER_COMMIT = 10
TREND_RUNS = 1000  # the sparkline covers at most this many latest completed runs
TREND_POINTS = 12
_COLUMNS = tuple(c.name for c in agent_board.columns)


def refresh_board(session: SqlSession, now: float) -> int:
    """Refresh the board rows of agents whose runs changed; returns how many."""
    marked = [r[0] for r in session.execute(select(board_stale.c.agent_id).limit(REFRESH_PER_STEP))]
    if not marked:
        return 0
    known = {
        r.id: r
        for r in session.execute(
            select(agents.c.id, agents.c.owner, agents.c.name).where(agents.c.id.in_(marked))
        )
    }
    rows = [_row(session.conn, known[ident], now) for ident in sorted(marked) if ident in known]
    if rows:
        session.upsert_rows(agent_board, _COLUMNS, rows, key=("agent_id",))
    session.execute(delete(board_stale).where(board_stale.c.agent_id.in_(marked)))
    return len(marked)


def enter_new_agents(session: SqlSession, written: Iterable[RunRow], now: float) -> int:
    """Board rows, in the transaction that writes these runs, for their agents
    the board does not list yet: an agent new to the board, or one whose
    board row is unlisted while one of these runs is listed (a task id or an
    agent span: kept_totals' `listed`). Its runs are visible once this
    commits (docs/runs.md "Delivery": within 1 s of the request), and so is
    the agent, on /agents, the board and the CLI's name lookup, however long
    the next sweep takes; the sweeper still refreshes every figure after.
    The first ENTER_PER_COMMIT are entered whole; any more (a fleet starting
    at once) with their headline figures only (`_headline_rows`), the radar
    and trend left to the sweep. Returns how many it entered."""
    listable: dict[str, bool] = {}
    for run in written:
        listed = run.task_id is not None or run.has_agent_span
        listable[run.agent_id] = listable.get(run.agent_id, False) or listed
    if not listable:
        return 0
    on_board: dict[str, bool] = {}
    for chunk in in_chunks(sorted(listable)):
        query = select(agent_board.c.agent_id, agent_board.c.listed).where(
            agent_board.c.agent_id.in_(chunk)
        )
        on_board.update((r.agent_id, bool(r.listed)) for r in session.execute(query))
    wanted = [
        ident
        for ident in sorted(listable)
        if ident not in on_board or (listable[ident] and not on_board[ident])
    ]
    known: list[Any] = []
    for chunk in in_chunks(wanted):
        query = select(agents.c.id, agents.c.owner, agents.c.name).where(agents.c.id.in_(chunk))
        known += session.execute(query).all()
    known.sort(key=lambda a: a.id)
    whole, rest = known[:ENTER_PER_COMMIT], known[ENTER_PER_COMMIT:]
    rows = [_row(session.conn, agent, now) for agent in whole]
    rows += _headline_rows(session, rest, now)
    if rows:
        session.upsert_rows(agent_board, _COLUMNS, rows, key=("agent_id",))
    return len(rows)


def _headline_rows(session: SqlSession, entered: list[Any], now: float) -> list[tuple[Any, ...]]:
    """Board rows with what /agents shows (runs, last run, composite) and the
    counts, from the kept sums of all of these agents at once; the radar
    columns empty and no trend until the sweeper refreshes them (their runs
    marked them stale)."""
    rows: list[tuple[Any, ...]] = []
    for chunk in in_chunks(entered):
        ids = [agent.id for agent in chunk]
        sums: dict[str, dict[tuple[str, str | None], tuple[Any, ...]]] = {i: {} for i in ids}
        for ident, status, source, *rest in kept_totals.totals_rows(session.conn, ids, ALL_RUNS):
            sums[ident][(status, source)] = tuple(rest)
        graded = dict(kept_totals.graded_rows(session.conn, ids, ALL_RUNS))
        seen = kept_totals.agent_rows(session.conn, ids)
        for agent in chunk:
            ident = agent.id
            counts, headline = counts_of(sums[ident]), composite_of(sums[ident])
            total, last_ns, listed = seen.get(ident, (0, None, False))
            rows.append(
                (
                    ident,
                    agent.owner,
                    agent.name,
                    listed,
                    total,
                    counts.completed,
                    counts.successful,
                    graded.get(ident, 0),
                    last_ns / 1e9 if last_ns is not None and total else None,
                    headline.composite_score if headline else None,
                    headline.success_rate if headline else None,
                    *(None,) * len(policy.RADAR_AXES),
                    0,
                    json.dumps([]),
                    now,
                )
            )
    return rows


def _row(conn: Connection, agent: Any, now: float) -> tuple[Any, ...]:
    ident = agent.id
    sums = {
        (status, source): tuple(rest)
        for _, status, source, *rest in kept_totals.totals_rows(conn, ident, ALL_RUNS)
    }
    counts = counts_of(sums)
    headline = composite_of(sums)
    graded = sum(g for _, g in kept_totals.graded_rows(conn, ident, ALL_RUNS))
    total, last_ns, listed = kept_totals.agent_rows(conn, ident).get(ident, (0, None, False))
    fitness = scoring.radar([record_of(r) for r in cohort_rows(conn, ident)])
    trend = scoring.composite_trend(_completed(conn, ident), TREND_POINTS)
    return (
        ident,
        agent.owner,
        agent.name,
        listed,
        total,
        counts.completed,
        counts.successful,
        graded,
        last_ns / 1e9 if last_ns is not None and total else None,
        headline.composite_score if headline else None,
        headline.success_rate if headline else None,
        fitness.correctness,
        fitness.latency,
        fitness.cost,
        fitness.tool_efficiency,
        fitness.robustness,
        fitness.runs_counted,
        json.dumps(trend),
        now,
    )


def _completed(conn: Connection, agent_id: str) -> list[scoring.RunRecord]:
    query = (
        select(runs)
        .where(
            runs.c.agent_id == agent_id,
            runs.c.status == "completed",
            runs.c.terminal_at.is_not(None),
        )
        .order_by(runs.c.terminal_at.desc(), runs.c.id.desc())
        .limit(TREND_RUNS)
    )
    return [record_of(r) for r in conn.execute(query)]


def catch_up(session: SqlSession, now: float) -> None:
    """Fold every pending run change and refresh every marked agent now: for a
    reader with no collector running (the CLI on a database), and a collector
    that stops."""
    while session.fold_run_deltas():
        pass
    while refresh_board(session, now):
        pass


def board_page(
    conn: Connection,
    *,
    everything: bool,
    weights: Mapping[str, float] | None,
    offset: int,
    limit: int,
) -> tuple[list[BoardRow], int]:
    """One page of the board and how many agents it ranks. By the headline
    composite (nulls last), then name and id; with weights, by the weighted
    radar first (docs/scoring.md: renormalised over the axes that have a
    value), the canonical order breaking ties."""
    b = agent_board.c
    # NOT IN the (few) deleted agents rather than IN the live ones: with
    # 100,000 agents SQLite built the list of every live one, then probed the
    # board once per agent (storage/board_recent.py measured 210 ms -> 26 ms).
    deleted = select(agents.c.id).where(agents.c.deleted_at.is_not(None))
    where = [b.agent_id.not_in(deleted)]
    if not everything:
        where.append(b.listed.is_(True))
    order: list[Any] = []
    weighted = None
    if weights is not None:
        weighted = _weighted(weights)
        order += [weighted.is_(None), weighted.desc()]
    order += [b.composite_score.is_(None), b.composite_score.desc(), b.name, b.agent_id]
    columns = [agent_board, (weighted if weighted is not None else literal(None)).label("weighted")]
    query = select(*columns).where(*where).order_by(*order).offset(offset).limit(limit)
    total = conn.execute(select(func.count()).select_from(agent_board).where(*where)).scalar_one()
    return [_board_row(r) for r in conn.execute(query)], int(total)


def _weighted(weights: Mapping[str, float]) -> Any:
    """The weighted radar composite in SQL, rounded as scoring rounds it."""
    b = agent_board.c
    axes = [(b[axis], float(weights.get(axis, 0.0))) for axis in policy.RADAR_AXES]
    numerator = sum((func.coalesce(axis, 0.0) * w for axis, w in axes), literal(0.0))
    denominator = sum((case((axis.is_(None), 0.0), else_=w) for axis, w in axes), literal(0.0))
    # PostgreSQL rounds to decimals only a numeric (round(double, int) does not exist).
    rounded = func.round(cast(numerator / denominator, Numeric), policy.COMPOSITE_DECIMALS)
    return case((denominator > 0, cast(rounded, Float)), else_=None)


def _board_row(r: Any) -> BoardRow:
    return BoardRow(
        agent_id=r.agent_id,
        owner=r.owner,
        name=r.name,
        total_runs=r.total_runs,
        completed_runs=r.completed_runs,
        graded_runs=r.graded_runs,
        last_run_at=r.last_run_at,
        composite_score=r.composite_score,
        success_rate=r.success_rate,
        axes={axis: getattr(r, axis) for axis in policy.RADAR_AXES},
        radar_runs=r.radar_runs,
        trend=tuple(json.loads(r.trend)),
        weighted=r.weighted,
    )
