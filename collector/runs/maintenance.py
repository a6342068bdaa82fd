"""The sweeper's work, apart from recomputation: due timers and stale marks
queued for the recomputer, the kept run sums folded, the board refreshed,
SQLite's key tails merged, and span retention (with grade aging and vacuum).

With several processes on one database only the lease holder sweeps
(storage.sweeper_lease). Every step is a job on the batch writer, so
maintenance never holds up the exports' commits for long.
"""

from __future__ import annotations

import logging
import math
import threading

from collector.runs.queue import JobSink, TraceQueue
from collector.runs.store import due_traces, stale_pending
from collector.storage.board import catch_up, refresh_board
from collector.storage.engine import Database
from collector.storage.grade_waits import age_out_grades
from collector.storage.sweeper_lease import SweeperLease
from collector.storage.writes import delete_old_spans
from collector.types import Clock

log = logging.getLogger(__name__)
# A pending mark this old was left by a process that stopped (or is far
# behind): the sweeper recomputes its trace. At start every mark is taken.
_PENDING_STALE_S = 30.0


class Maintenance:
    def __init__(
        self,
        db: Database,
        jobs: JobSink,
        queue: TraceQueue,
        clock: Clock,
        *,
        sweep_interval_s: float = 1.0,
        retention_s: float = 30 * 86400.0,
        retention_every_s: float = 3600.0,
        grade_wait_s: float = 7 * 86400.0,
    ) -> None:
        self._db = db
        self._jobs = jobs
        self._queue = queue
        self._clock = clock
        self._sweep_interval_s = sweep_interval_s
        self._retention_s = retention_s
        self._retention_every_s = retention_every_s
        self._grade_wait_s = grade_wait_s
        self._last_retention = 0.0
        self._swept = False  # the first sweep takes every pending mark
        self._retention: threading.Thread | None = None
        self._stopped = threading.Event()
        self._lease = SweeperLease(db)
        self._thread = threading.Thread(target=self._run, name="maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop sweeping; the board is brought up to date before the writer stops."""
        self._stopped.set()
        self._thread.join(60)
        if self._retention is not None:
            self._retention.join(60)
        self._lease.release()
        self.catch_up_board()

    def leads(self) -> bool:
        """Whether this process holds the sweeper lease now (taking it if free):
        work done once per database (reclassification) runs here alone."""
        return self._lease.held()

    def catch_up_board(self) -> None:
        """Every pending run change folded and every changed agent's board row
        refreshed now (a sweep does it a bit at a time)."""
        self._jobs.submit_job(lambda session: catch_up(session, self._clock())).result()

    def sweep(self) -> None:
        """Queue traces whose timers are due; fold, refresh, merge; start a
        retention pass when one is due."""
        if not self._lease.held():
            return
        now = self._clock()
        with self._db.reading() as session:
            due = due_traces(session, now)
            due |= stale_pending(session, now - _PENDING_STALE_S if self._swept else math.inf)
        self._swept = True
        self._queue.notify(due)
        # The kept run sums: pending changes folded in (storage.kept_totals)...
        self._jobs.submit_job(lambda session: session.fold_run_deltas())
        # ...and the board rows of the agents whose runs changed (storage/board.py).
        self._jobs.submit_job(lambda session: refresh_board(session, now))
        # SQLite: recent traces and runs into their indexes, in bulk (none elsewhere).
        self._jobs.submit_job(lambda session: session.merge_key_tails())
        passing = self._retention is not None and self._retention.is_alive()
        if now - self._last_retention >= self._retention_every_s and not passing:
            self._last_retention = now
            # Its own thread: a pass of many steps must not hold up the sweeps.
            self._retention = threading.Thread(
                target=self.retain, args=(now - self._retention_s,), name="retention", daemon=True
            )
            self._retention.start()

    def retain(self, cutoff: float) -> None:
        """A retention pass, in steps: each is one job among the exports'
        commits, so a pass that deletes millions never stops ingest."""
        total = 0
        try:
            while deleted := self._jobs.submit_job(
                lambda session: delete_old_spans(session, cutoff, self._clock())
            ).result():
                total += deleted
                if self._stopped.is_set():
                    break
            # Grades still waiting for their run after grade_wait_s (docs/loop.md).
            waited = self._clock() - self._grade_wait_s
            while (
                not self._stopped.is_set()
                and self._jobs.submit_job(lambda session: age_out_grades(session, waited)).result()
            ):
                pass
        except Exception as exc:
            if not self._db.health.failed(exc):  # an outage is logged once, there
                log.exception("retention pass failed; the next one goes on")
        if total:
            log.info("retention: deleted %d spans and trace rows", total)
            self._vacuum()

    def _vacuum(self) -> None:
        """After a pass that deleted rows: their space, free for new ones."""
        try:
            self._db.backend.vacuum_retained()
        except Exception:
            log.exception("vacuum after retention failed; autovacuum will do it")

    def _run(self) -> None:
        while not self._stopped.wait(self._sweep_interval_s):
            try:
                self.sweep()
            except Exception as exc:
                if not self._db.health.failed(exc):  # an outage is logged once, there
                    log.exception("sweep failed; will retry")
