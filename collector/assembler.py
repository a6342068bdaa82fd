"""The run assembler thread: recompute touched traces soon after each commit.

Commits notify it with the traces they touched; it waits `delay` to let the
rest of a burst arrive (so a trace sent in 20 requests is not recomputed 20
times), then recomputes each trace from its stored span facts in one
transaction. A sweep turns timers (orphan grace, run timeout) into status
changes, and old spans are deleted after the retention period.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError

from collector.assembly.runs import Timers, assemble_trace
from collector.metrics import Metrics
from collector.storage.engine import Database
from collector.storage.run_writes import (
    delete_old_spans,
    due_traces,
    group_by_owner,
    load_trace_facts,
    replace_trace_runs,
)

log = logging.getLogger(__name__)
Clock = Callable[[], float]
TraceKey = tuple[str, str]
_MAX_TRACES_PER_TXN = 500
_RETENTION_EVERY_S = 3600.0


class RunAssembler:
    def __init__(
        self,
        db: Database,
        timers: Timers,
        clock: Clock,
        metrics: Metrics,
        *,
        delay_s: float = 0.2,
        sweep_interval_s: float = 1.0,
        retention_s: float = 30 * 86400.0,
    ) -> None:
        self._db = db
        self._timers = timers
        self._clock = clock
        self._metrics = metrics
        self._delay_s = delay_s
        self._sweep_interval_s = sweep_interval_s
        self._retention_s = retention_s
        self._pending: set[TraceKey] = set()
        self._cond = threading.Condition()
        self._stopping = False
        self._last_retention = 0.0
        self._thread = threading.Thread(target=self._run, name="run-assembler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def notify(self, traces: set[TraceKey]) -> None:
        if not traces:
            return
        with self._cond:
            self._pending |= traces
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(60)
        self.process_pending()

    def process_pending(self) -> None:
        """Recompute every pending trace now (also used at shutdown)."""
        with self._cond:
            work, self._pending = self._pending, set()
        if not work:
            return
        try:
            self.recompute(work)
        except SQLAlchemyError:
            with self._cond:
                self._pending |= work  # nothing is lost: try again on the next round
            raise

    def sweep(self) -> None:
        """Queue traces whose timers are due, and apply span retention."""
        now = self._clock()
        with self._db.reader.connect() as conn:
            due = due_traces(conn, now)
        self.notify(due)
        if now - self._last_retention >= _RETENTION_EVERY_S:
            self._last_retention = now
            with self._db.writer.begin() as conn:
                deleted = delete_old_spans(conn, now - self._retention_s)
            if deleted:
                log.info("retention: deleted %d spans", deleted)

    def recompute(self, traces: set[TraceKey]) -> None:
        for owner, trace_ids in group_by_owner(traces).items():
            for start in range(0, len(trace_ids), _MAX_TRACES_PER_TXN):
                self._recompute_chunk(owner, trace_ids[start : start + _MAX_TRACES_PER_TXN])

    def _recompute_chunk(self, owner: str, trace_ids: list[str]) -> None:
        with self._db.writer.begin() as conn:
            now = self._clock()
            facts = load_trace_facts(conn, owner, trace_ids)
            assembled = {
                trace_id: assemble_trace(trace_id, facts.get(trace_id, []), now, self._timers)
                for trace_id in trace_ids
            }
            finalised = replace_trace_runs(conn, owner, assembled, now)
        for run in finalised:
            self._metrics.runs_finalised.labels(run.status).inc()

    def _run(self) -> None:
        next_sweep = 0.0
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(self._sweep_interval_s)
                if self._stopping:
                    return
            if self._pending and self._delay_s:
                with self._cond:
                    self._cond.wait(self._delay_s)  # let the rest of a burst land
                    if self._stopping:
                        return
            try:
                self.process_pending()
                if self._clock() >= next_sweep:
                    next_sweep = self._clock() + self._sweep_interval_s
                    self.sweep()
            except SQLAlchemyError as exc:
                log.error("run assembly failed, will retry: %s", exc)
