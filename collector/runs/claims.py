"""What a grader key recorded stays the grader's, across traces (docs/runs.md
"Runs a grader recorded", docs/screening.md "What the agent under test cannot change").

Assembly keeps a grader's run whole inside one trace (assembly.membership);
a run key and a screening reach across traces, so the runs a write is
about to store are checked here, in its transaction, against what is
stored (issue 37 items 1 and 3):

- A run key (`badge.run.id`) that a grader's run holds in one trace is
  never taken by a run no grader's span claims in another: that run is
  stored under its aside key (`membership.aside_key`), a run of its own.
  A grader's run takes its key from such a run stored first, whose trace is
  then recomputed (and goes aside). Between two runs of the same kind the
  last write keeps the key, as before (a resumed screening sends a
  dispatch again under its run key).
- A screening a grader recorded (planned, or named by a grader's run)
  counts no run that no grader's span claims: such a run keeps its
  outcome, but names no screening. Runs of the agent's own stored before
  the screening became a grader's are recomputed then.

Either arrival order ends in the same stored runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from collector.assembly.membership import aside_key, run_id_for
from collector.storage.run_claims import (
    StoredClaim,
    graders_screenings,
    stored_claims,
    unclaimed_screened,
)
from collector.storage.session import SqlSession
from collector.types import TraceKey

T = TypeVar("T", bound="Claimed")

# A run that counts in no screening: the screening fields of its root set aside.
_UNSCREENED: dict[str, Any] = dict.fromkeys(
    ("screening_id", "screening_round", "suite_name", "suite_digest")
)


class Claimed(Protocol):
    """What this reads of a run about to be stored (assembly's Run, a RunRow)."""

    @property
    def id(self) -> str: ...
    @property
    def agent_id(self) -> str: ...
    @property
    def trace_id(self) -> str: ...
    @property
    def run_key(self) -> str: ...
    @property
    def grader_claim(self) -> bool: ...
    @property
    def screening_id(self) -> str | None: ...


@dataclass
class Resolution:
    """What to change of the runs about to be stored, and what else to redo."""

    aside: set[tuple[str, str]] = field(default_factory=set)  # (trace id, run id)
    unscreened: set[tuple[str, str]] = field(default_factory=set)  # (trace id, run id)
    displaced: dict[str, StoredClaim] = field(default_factory=dict)  # run id -> the run replaced
    recheck: set[TraceKey] = field(default_factory=set)  # traces to recompute

    def changes(self, run: Claimed) -> dict[str, Any]:
        """The fields to replace on this run (none: store it as assembled)."""
        found: dict[str, Any] = {}
        key = (run.trace_id, run.id)
        if key in self.aside:
            aside = aside_key(run.trace_id, run.run_key)
            found.update(id=run_id_for(run.agent_id, aside), run_key=aside)
        if key in self.unscreened:
            found.update(_UNSCREENED)
        return found


def resolve(session: SqlSession, owner: str, runs: Sequence[Claimed], now: float) -> Resolution:
    """Decide, in the writing transaction, and mark the traces to recompute
    pending (committed with the runs, so a crash still recomputes them)."""
    found = Resolution()
    _hold_run_keys(session, owner, runs, found)
    _hold_screenings(session, runs, found)
    if found.recheck:
        found.recheck -= {(owner, run.trace_id) for run in runs}  # stored right now
        session.mark_pending(found.recheck, now)
    return found


def _hold_run_keys(
    session: SqlSession, owner: str, runs: Sequence[Claimed], found: Resolution
) -> None:
    by_id: dict[str, list[Claimed]] = defaultdict(list)
    for run in runs:
        if run.run_key.startswith("run:"):  # only a badge.run.id names a run of another trace
            by_id[run.id].append(run)
    stored = stored_claims(session, list(by_id))
    for run_id, claimants in by_id.items():
        held = stored.get(run_id)
        graders = {run.trace_id for run in claimants if run.grader_claim}
        if held is not None and held.grader_claim:
            graders.add(held.trace_id)
        for run in claimants:
            if not run.grader_claim:
                if graders - {run.trace_id}:
                    found.aside.add((run.trace_id, run_id))
            elif (
                held is not None
                and not held.grader_claim
                and not held.sealed
                and held.trace_id != run.trace_id
            ):
                found.displaced[run_id] = held
                found.recheck.add((owner, held.trace_id))


def _hold_screenings(session: SqlSession, runs: Sequence[Claimed], found: Resolution) -> None:
    screened = [run for run in runs if run.screening_id is not None]
    if not screened:
        return
    graded = {(run.agent_id, str(run.screening_id)) for run in screened if run.grader_claim}
    others = {(run.agent_id, str(run.screening_id)) for run in screened if not run.grader_claim}
    held = graded | graders_screenings(session, others - graded)
    for run in screened:
        if not run.grader_claim and (run.agent_id, run.screening_id) in held:
            found.unscreened.add((run.trace_id, run.id))
    found.recheck |= unclaimed_screened(session, graded)


def applied(resolution: Resolution, items: Iterable[T], replace: Callable[..., T]) -> list[T]:
    """Each item with its changes applied through `replace(item, **changes)`
    (dataclasses.replace for a Run, `RunRow._replace` for a row)."""
    result = []
    for item in items:
        changes = resolution.changes(item)
        result.append(replace(item, **changes) if changes else item)
    return result
