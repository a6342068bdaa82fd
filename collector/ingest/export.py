"""What one export is: its wire (codec, compression), its outcome, and the
two ways of driving it.

`Ingest.export` is a generator: it does the export's work and yields each
future it has to wait for (the decoder's rows, the writer's commit), and
is sent each one's result back. The gRPC door drives it on its handler
thread (`run_blocking`), the HTTP door on the event loop (`run_async`):
one export path, two ways of waiting, and nothing of the path in a door.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from collector.errors import IngestError
from proto import Codec

# An export in progress: yields futures, is sent their results, returns its Outcome.
Export = Generator["Future[Any]", Any, "Outcome"]


@dataclass(frozen=True, slots=True)
class Wire:
    """How a request's body is encoded, chosen once when it arrives."""

    codec: Codec
    gzip: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an export ended: stored (with the spans refused), or refused."""

    codec: Codec  # the encoding its answer is written in
    accepted: int = 0
    rejected: int = 0
    message: str = ""  # partial_success's error_message
    error: IngestError | None = None

    @property
    def kind(self) -> str:
        """The `status` label it is counted under."""
        return "ok" if self.error is None else self.error.kind


def run_blocking(export: Export) -> Outcome:
    """Drive an export on this thread, blocking on each future it yields."""
    try:
        future = next(export)
        while True:
            try:
                result = future.result()
            except Exception as exc:  # the export's own handlers decide
                future = export.throw(exc)
            else:
                future = export.send(result)
    except StopIteration as done:
        outcome: Outcome = done.value
        return outcome


async def run_async(export: Export) -> Outcome:
    """Drive an export on the event loop, awaiting each future it yields."""
    try:
        future = next(export)
        while True:
            try:
                result = await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                export.close()
                raise
            except Exception as exc:
                future = export.throw(exc)
            else:
                future = export.send(result)
    except StopIteration as done:
        outcome: Outcome = done.value
        return outcome
