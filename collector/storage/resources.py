"""Resources: each distinct one stored once, by digest, and let go by retention.

Span rows point at their resource by `resource_digest` (tables.resources).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from collector.storage.session import SqlSession

# A stored resource's `seen_at` is rewritten at most this often: a rewrite
# dirties a random page, and a process sends the same resource all day.
RESOURCE_REFRESH_S: Final = 3600.0


def register_resources(session: SqlSession, rows: Sequence[tuple[Any, ...]]) -> None:
    """Store (digest, encoded, seen_at) rows not stored yet; refresh a stored
    one's `seen_at` when it is over RESOURCE_REFRESH_S old.

    Sorted by digest: concurrent PostgreSQL writers take these rows' locks in
    one order (ON CONFLICT DO UPDATE locks the row even when its WHERE is
    false), so they never wait in a cycle, and retention skips locked rows.
    """
    if not rows:
        return
    unique = {row[0]: row for row in rows}
    ordered = [unique[digest] for digest in sorted(unique)]
    mark = session.mark
    session.cursor().executemany(
        f"INSERT INTO resources (digest, encoded, seen_at) VALUES ({mark}, {mark}, {mark}) "
        "ON CONFLICT (digest) DO UPDATE SET seen_at = excluded.seen_at "
        f"WHERE resources.seen_at < excluded.seen_at - {RESOURCE_REFRESH_S}",
        ordered,
    )


def delete_unused_resources(session: SqlSession, older_than: float) -> None:
    """Retention of resources: a span received before `older_than` is deleted,
    and every span using a resource arrived at most RESOURCE_REFRESH_S after
    its `seen_at`; so one last seen before `older_than - RESOURCE_REFRESH_S`
    has no span left."""
    session.delete_resources_seen_before(older_than - RESOURCE_REFRESH_S)
