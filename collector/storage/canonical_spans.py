"""A run's spans in the canonical form the spans digest covers (CERTS.md section 2).

The flat list of the run's spans ordered by span id, each
`{span_id, parent_span_id, name, kind, start_ns, end_ns, status_code,
attributes}` with the times as decimal strings and the attributes as the
trace view shows them (proto.view: bytes as `{"bytesValue": base64}`, a
non-finite double by name), integers past 2^53 as decimal strings and every
finite double a JSON number (collector.certificates.canonical.attribute_json).
The run's members are found as the trace view finds them: by re-running
assembly over the trace's spans.
`GET /runs/{id}/trace?canonical=true` answers these very bytes.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from api.certificate_ports import CanonicalSpans, KeyRef
from api.ports import RunInfo
from collector.assembly.runs import Timers, assemble_trace
from collector.certificates.canonical import attribute_json, canonical_json, sha256_hex
from collector.storage.session import SqlSession
from collector.storage.trace_spans import FACT_COLUMNS, fact_values, stored_as, to_span_facts
from proto.view import span_attributes

_COLUMNS = (*FACT_COLUMNS[1:], "kind", "encoded", "key_id")
_Row = namedtuple("_Row", _COLUMNS)  # type: ignore[misc]  # a stored span, by column name


def canonical_spans(
    session: SqlSession, run: RunInfo, now: float, timers: Timers
) -> CanonicalSpans:
    key = (run.owner, run.trace_id)
    number = session.trace_numbers([key]).get(key)
    rows: list[Any] = []
    if number is not None:  # the raw cursor: Core's statement overhead was the larger cost
        found = session.iter_numbered("spans", "trace_ref", _COLUMNS, [number])
        rows = [_Row._make(values) for values in found]
    facts = [to_span_facts(fact_values(r)) for r in rows]
    assembled = stored_as(assemble_trace(run.trace_id, facts, now, timers), run.id)
    members = [] if assembled is None else [r for r in rows if r.span_id in assembled.verdicts]
    members.sort(key=lambda r: r.span_id)
    body = canonical_json([_canonical(r) for r in members])
    root = next((r for r in members if assembled and r.span_id == assembled.root_span_id), None)
    return CanonicalSpans(body, len(members), sha256_hex(body), _key(session, root))


def _canonical(row: Any) -> dict[str, Any]:
    return {
        "span_id": row.span_id,
        "parent_span_id": row.parent_span_id or None,
        "name": row.name,
        "kind": int(row.kind),
        "start_ns": str(row.start_ns),
        "end_ns": str(row.end_ns),
        "status_code": int(row.status_code),
        "attributes": attribute_json(span_attributes(row.encoded)),
    }


def _key(session: SqlSession, root: Any) -> KeyRef | None:
    """The key that sent the root span, as `keys list` shows it."""
    if root is None or root.key_id is None:
        return None
    cur = session.cursor()
    cur.execute(f"SELECT role FROM keys WHERE id = {session.mark}", (root.key_id,))
    found = cur.fetchone()
    return KeyRef(int(root.key_id), str(found[0])) if found is not None else None
