"""The decoder processes: one pool, replaced as a whole when a process dies.

`concurrent.futures.ProcessPoolExecutor` cannot lose a process: when one
dies (SIGKILL, the OOM killer) the pool marks itself broken, fails every
request it holds with `BrokenProcessPool` and refuses every later one.
Before, that was 500 / INTERNAL for every export until the collector was
restarted, while /readyz said ready (issue 37). Now the requests the pool
held fail as `DecoderLost` (503 / UNAVAILABLE + RetryInfo: an exporter sends
them again), a new pool takes its place at once (later requests queue for
its processes), and `ready()` is False from the death until the new pool's
processes have all started.

A broken pool does not always answer what it held: CPython 3.11's pool
fails a request whose bytes were being written to the dead process with
the pipe's own error (from its feeder thread, racing the manager thread
that fails the rest), and in that race a request was once left pending
for good: its export hung, and so did the collector's exit, waiting for
the thread that waited for it. So every request a pool holds is tracked
here, a pipe error counts as the process's death, and whatever a broken
pool has not answered within `ANSWER_GRACE_S` is answered DecoderLost.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import BrokenExecutor, Future, InvalidStateError, ProcessPoolExecutor
from functools import partial

from collector.conventions import ConventionSet
from collector.errors import DecoderLost
from collector.ingest.decoding import (
    DecodedRows,
    DecodeJob,
    decode_in_worker,
    decode_job,
    recognising,
    start_worker,
)

log = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0  # spawning imports the decoder's modules: seconds on a loaded machine
ANSWER_GRACE_S = 2.0  # how long a broken pool has to fail its requests itself
# What a request fails with when the process (or the pipe to it) is gone,
# rather than the decoder refusing its bytes (an IngestError).
_LOST = (BrokenExecutor, OSError)


class Decoder:
    """Runs `decode_job` inline (`workers=0`) or in a pool of spawned processes."""

    def __init__(self, workers: int, conventions: ConventionSet) -> None:
        self.workers = workers
        self._conventions = conventions
        self._inline = recognising(conventions)
        self.replaced = 0  # pools replaced since start (a process died in each)
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = self._new_pool() if workers > 0 else None
        self._started: ProcessPoolExecutor | None = None  # the pool whose processes are up
        # Each pool's requests not yet answered (guarded by _lock).
        self._held: dict[ProcessPoolExecutor, set[Future[DecodedRows]]] = {}

    def warm_up(self) -> None:
        """Start the worker processes now, not on the first export."""
        if self._pool is not None:
            self._start(self._pool)

    def ready(self) -> bool:
        """Whether a decoder process can take a request now. A pool found
        broken here (a process died while idle) is replaced at once, so
        readiness comes back without waiting for an export."""
        pool = self._pool
        if pool is None:
            return True
        if getattr(pool, "_broken", False):  # set by the pool's own manager thread
            self._replace(pool)
            return False
        return self._started is pool

    def submit(self, job: DecodeJob) -> Future[DecodedRows]:
        """A future of the rows, or of an IngestError: the decoder's own
        (400, 413), or DecoderLost if the process decoding it died."""
        answer: Future[DecodedRows] = Future()
        pool = self._pool
        if pool is None:
            try:
                answer.set_result(decode_job(job, self._inline))
            except Exception as exc:
                answer.set_exception(exc)
            return answer
        try:
            decoding = self._hold(pool, answer, job)
        except BrokenExecutor:  # died before this request came: it goes to the new pool
            pool = self._replace(pool)
            try:
                decoding = self._hold(pool, answer, job)
            except RuntimeError:  # broken again, or shut down (BrokenExecutor is one)
                _answer(answer, DecoderLost())
                return answer
        decoding.add_done_callback(partial(self._settle, answer, pool))
        return answer

    def _hold(
        self, pool: ProcessPoolExecutor, answer: Future[DecodedRows], job: DecodeJob
    ) -> Future[DecodedRows]:
        with self._lock:
            self._held.setdefault(pool, set()).add(answer)
        try:
            return pool.submit(decode_in_worker, job)
        except BaseException:
            self._release(pool, answer)
            raise

    def _release(self, pool: ProcessPoolExecutor, answer: Future[DecodedRows]) -> None:
        with self._lock:
            held = self._held.get(pool)
            if held is not None:
                held.discard(answer)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=False)

    def _settle(
        self, answer: Future[DecodedRows], pool: ProcessPoolExecutor, decoding: Future[DecodedRows]
    ) -> None:
        """On one of the pool's threads: hand the outcome over; a request
        whose process died fails as DecoderLost and the pool is replaced."""
        self._release(pool, answer)
        failure = DecoderLost() if decoding.cancelled() else decoding.exception()
        if failure is None:
            _answer(answer, decoding.result())
            return
        if isinstance(failure, _LOST):
            if isinstance(failure, BrokenExecutor) or getattr(pool, "_broken", False):
                self._replace(pool)
            failure = DecoderLost()
        _answer(answer, failure)

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """The pool that follows `broken` (made once, whoever asks first).

        Making it spawns nothing; its processes start on a thread of their
        own, which also lets go of the broken pool, so neither a request's
        thread nor the broken pool's manager thread waits for a spawn."""
        with self._lock:
            current = self._pool
            if current is not broken or current is None:
                return current or broken  # already replaced (or closed: submits fail)
            fresh = self._pool = self._new_pool()
            self.replaced += 1
        log.error(
            "a decoder process died; exports it held are answered 503 / UNAVAILABLE; "
            "starting a new pool of %d",
            self.workers,
        )
        threading.Thread(
            target=self._restart, args=(broken, fresh), name="decoder-restart", daemon=True
        ).start()
        return fresh

    def _restart(self, broken: ProcessPoolExecutor, fresh: ProcessPoolExecutor) -> None:
        broken.shutdown(wait=False, cancel_futures=True)
        began = time.monotonic()
        self._answer_left(broken, began + ANSWER_GRACE_S)
        try:
            self._start(fresh)
        except (BrokenExecutor, RuntimeError, TimeoutError):
            return  # broken or closed meanwhile: the next submit or ready() replaces it
        log.warning("decoder processes ready again after %.1f s", time.monotonic() - began)

    def _answer_left(self, broken: ProcessPoolExecutor, deadline: float) -> None:
        """DecoderLost for whatever `broken` has not answered by `deadline`."""
        while time.monotonic() < deadline:
            with self._lock:
                if not self._held.get(broken):
                    break
            time.sleep(0.05)
        with self._lock:
            left = self._held.pop(broken, set())
        for answer in left:
            _answer(answer, DecoderLost())

    def _start(self, pool: ProcessPoolExecutor) -> None:
        """Every process of `pool` up (one trivial call each), then mark it started."""
        for future in [pool.submit(os.getpid) for _ in range(self.workers)]:
            future.result(timeout=START_TIMEOUT_S)
        with self._lock:
            if self._pool is pool:
                self._started = pool

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=start_worker,
            initargs=(os.getpid(), self._conventions.sources, self._conventions.digest),
        )


def _answer(answer: Future[DecodedRows], outcome: DecodedRows | BaseException) -> None:
    """Set a request's outcome unless it has one: a broken pool's own answer
    and the one made for it here may both come."""
    try:
        if isinstance(outcome, BaseException):
            answer.set_exception(outcome)
        else:
            answer.set_result(outcome)
    except InvalidStateError:
        pass
