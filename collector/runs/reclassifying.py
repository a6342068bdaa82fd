"""Reclassification in a running server (CONVENTIONS.md section 5): a thread
that works through the stale runs a batch at a time, in the one process
that holds the sweeper lease (storage.sweeper_lease), so two servers on one
database do it once and a survivor takes over from one that died.

It never blocks ingest or reads: each batch is one job among the exports'
group commits, and after a batch that took t (wall clock, its wait for the
commit included) the thread rests `PAUSE_FACTOR` x t. Wall time, not the
thread's CPU time: under load a batch waits longer for the GIL and the
writer, so it rests longer, and ingest keeps its rate (bench/reclassify.py,
medians of 3 rounds on 2 busy cores: SQLite 0.91x with 219 runs/s
reclassified meanwhile, PostgreSQL 0.93x with 94 runs/s; with the thread's
CPU time instead, 0.72-0.80x on SQLite even at a factor of 3).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from collector.runs.reclassify import Reclassifier
from collector.storage.engine import Database

log = logging.getLogger(__name__)
PAUSE_FACTOR = 1.0
_MIN_PAUSE_S = 0.005
_LEASE_WAIT_S = 5.0  # between looks at the lease while another process holds it
_LOG_EVERY_S = 10.0


class BackgroundReclassification:
    def __init__(
        self,
        reclassifier: Reclassifier,
        db: Database,
        leads: Callable[[], bool],
        *,
        pause_factor: float = PAUSE_FACTOR,
        lease_wait_s: float = _LEASE_WAIT_S,
    ) -> None:
        self.reclassifier = reclassifier
        self._db = db
        self._leads = leads
        self._pause_factor = pause_factor
        self._lease_wait_s = lease_wait_s
        self._stopped = threading.Event()
        self.finished = threading.Event()  # every stale run done (tests, the log)
        self._thread = threading.Thread(target=self._run, name="reclassify", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """After the batch in progress: its transaction commits or never was."""
        self._stopped.set()
        if self._thread.ident is not None:  # started
            self._thread.join(60)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                if self._leads():
                    if self._work():
                        self.finished.set()
                        return
                    continue
            except Exception as exc:
                if not self._db.health.failed(exc):  # an outage is logged once, there
                    log.exception("reclassification failed; will retry")
            self._stopped.wait(self._lease_wait_s)

    def _work(self) -> bool:
        """Batches while this process leads; True once nothing is stale."""
        work = self.reclassifier
        progress = work.count()
        if progress.remaining:
            log.info(
                "conventions %s: %d stored runs were recognised under other conventions; "
                "reclassifying them in the background, newest first",
                work.digest,
                progress.remaining,
            )
        said = time.monotonic()
        while not self._stopped.is_set():
            began = time.monotonic()
            more = work.step()
            took = time.monotonic() - began
            if not more:
                if progress.reclassified or progress.sealed:
                    log.info(
                        "reclassification done: %d runs recomputed under conventions %s; "
                        "%d sealed runs keep the counts of the conventions they were "
                        "recognised under; %d left",
                        progress.reclassified,
                        work.digest,
                        progress.sealed,
                        progress.remaining,
                    )
                return True
            if time.monotonic() - said >= _LOG_EVERY_S:
                said = time.monotonic()
                log.info(
                    "reclassifying: %d runs done, %d to go",
                    progress.reclassified,
                    progress.remaining,
                )
            if not self._leads():
                return False
            self._stopped.wait(max(_MIN_PAUSE_S, took * self._pause_factor))
        return False
