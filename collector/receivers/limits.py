"""What each door allows a client: built once from the settings.

Also the one check that the limits fit the process: every open connection
is a file descriptor, and a port that runs out of them cannot accept even
`/healthz` (issue 29: 20,000 idle connections did that, and every failed
accept logged a traceback). The connection bounds must stay below the
descriptor limit, so at start the soft limit is raised to what both doors
may hold, as far as the hard limit allows; if it cannot be, the bounds
shrink to fit and the collector says so once.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass, replace

log = logging.getLogger(__name__)
# Descriptors the rest of the process uses (database, decoder pipes, grpc-core's
# own: ~60 idle), one accept batch, and refused connections being closed.
HEADROOM_FDS = 256
# The longest request head (request line and headers) the HTTP port reads.
MAX_HEAD_BYTES = 64 * 1024
# How many connections the HTTP port accepts in one go (asyncio accepts up
# to its listen backlog per wake-up, before any is admitted or refused, so
# this is how far past `max_connections` descriptors can briefly go; it is
# also the listen queue). uvicorn's 2,048 took a process at a 600-descriptor
# limit into failed accepts before the first connection could be refused.
ACCEPT_BATCH = 128


@dataclass(frozen=True, slots=True)
class DoorLimits:
    max_body_bytes: int
    max_connections: int
    header_timeout_s: float
    body_timeout_s: float
    idle_timeout_s: float
    grpc_max_concurrent_exports: int
    max_head_bytes: int = MAX_HEAD_BYTES


def fit_descriptors(limits: DoorLimits) -> DoorLimits:
    """`limits`, with `max_connections` lowered if the descriptor limit
    cannot hold both doors' connections (after trying to raise it)."""
    needed = 2 * limits.max_connections + HEADROOM_FDS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return limits
    fitted = max(16, (soft - HEADROOM_FDS) // 2)
    log.warning(
        "the descriptor limit (%d) cannot hold %d connections per door; "
        "holding %d per door instead (raise `ulimit -n` to lift this)",
        soft,
        limits.max_connections,
        fitted,
    )
    return replace(limits, max_connections=fitted)
