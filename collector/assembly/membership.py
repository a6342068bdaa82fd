"""Which run each span of a trace belongs to, and each run's root (docs/runs.md "Who owns what")."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from collector.assembly import fact_keys as K
from collector.assembly.facts import SpanFacts

RUN_NAMESPACE = uuid.UUID("6f1d8a52-3b7e-5c1a-9d2e-b4c0a7e3f915")
_NAMESPACE_BYTES = RUN_NAMESPACE.bytes

# OTLP span flags: bit 8 says whether bit 9 is known; bit 9 = parent is remote.
FLAG_HAS_IS_REMOTE = 0x100
FLAG_IS_REMOTE = 0x200


def run_id_for(agent_id: str, run_key: str) -> str:
    """UUIDv5 of the agent and the run key: every process agrees on it.

    Exactly `str(uuid.uuid5(RUN_NAMESPACE, ...))` (a test checks), without
    the UUID object: this runs once per run at ingest, and the object and
    its formatting took two thirds of the time.
    """
    name = f"{agent_id}\x00{run_key}".encode()
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name).digest())
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    x = digest[:16].hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


_TRACE_HEX = re.compile(r"[0-9a-fA-F]{32}")


def keyed_run_ids(agent_id: str, run_key: str) -> list[str]:
    """The runs a user's run key can name (docs/loop.md "Graded outcomes"):
    the run whose badge.run.id it is, and, when it reads as a trace id, the
    run of that trace (keyed by its lowercase hex)."""
    ids = [run_id_for(agent_id, f"run:{run_key}")]
    if _TRACE_HEX.fullmatch(run_key):
        ids.append(run_id_for(agent_id, f"trace:{run_key.lower()}"))
    return ids


def aside_key(trace_id: str, run_key: str) -> str:
    """The run key of spans a grader's claim leaves out (docs/runs.md "Runs a
    grader recorded"): the spans of other keys in a grader's run that are no
    descendants of a grader's span, and a run of another key that names a run
    key a grader's run of another trace holds (collector.runs.claims). Run
    keys otherwise start with `run:` or `trace:`, so no badge.run.id and no
    trace can name it."""
    return f"aside:{trace_id}:{run_key}"


def grader_claims(run_key: str, members: Sequence[SpanFacts]) -> bool:
    """Whether a span from a grader key claims this run: in a run of a
    badge.run.id, a grader's span that carries it; in a trace's run, a
    grader's span that may be its root on its own (no parent, or a parent its
    flags say is remote). A grader's span inside an agent's run (an
    evaluation under the agent's root) claims nothing."""
    if run_key.startswith("run:"):
        return any(span.grader and K.RUN_ID in span.facts for span in members)
    if run_key.startswith("trace:"):
        return any(span.grader and _alone(span) for span in members)
    return False


def _alone(span: SpanFacts) -> bool:
    remote = FLAG_HAS_IS_REMOTE | FLAG_IS_REMOTE
    return not span.parent_span_id or span.flags & remote == remote


def group_runs(trace_id: str, spans: Sequence[SpanFacts]) -> dict[tuple[str, str], list[SpanFacts]]:
    """(agent_id, run_key) -> spans (docs/runs.md "Who owns what").

    A span that carries badge.run.id claims its descendants that name no
    other one, whatever agent their resources name: a screened agent's
    services all belong to the screened run, which is the claiming span's
    agent's (SCREEN.md section 4). A span under no claim is in its own
    agent's run of the trace. In a run a grader's span claims, a span of
    another key that would be a root on its own goes aside (`_held_apart`)."""
    ordered = sorted(spans, key=lambda s: s.span_id)
    agents = {span.agent_id for span in spans}
    if len(agents) == 1 and not any(K.RUN_ID in span.facts or span.grader for span in spans):
        # The common case, decided without walking parents: one agent, no
        # badge.run.id and no grader's span anywhere make the whole trace one run.
        return {(agents.pop(), f"trace:{trace_id}"): ordered}
    by_id = {span.span_id: span for span in spans}
    claims: dict[str, tuple[str, str] | None] = {}

    def claim_of(span: SpanFacts) -> tuple[str, str] | None:
        chain: list[SpanFacts] = []
        current: SpanFacts | None = span
        found: tuple[str, str] | None = None
        while current is not None:
            if current.span_id in claims:
                found = claims[current.span_id]
                break
            chain.append(current)
            own = current.facts.get(K.RUN_ID)
            if own is not None:
                found = (current.agent_id, f"run:{own}")
                break
            parent = by_id.get(current.parent_span_id)
            if parent is None or len(chain) > len(by_id):
                break
            current = parent
        for member in chain:
            claims[member.span_id] = found
        return found

    groups: dict[tuple[str, str], list[SpanFacts]] = defaultdict(list)
    for span in ordered:
        groups[claim_of(span) or (span.agent_id, f"trace:{trace_id}")].append(span)
    return _held_apart(trace_id, groups)


def _held_apart(
    trace_id: str, groups: dict[tuple[str, str], list[SpanFacts]]
) -> dict[tuple[str, str], list[SpanFacts]]:
    """A run a grader's span claims keeps the grader's spans and the spans
    under them. A span of another key that would be a root on its own there
    (`_rivals`) forms, with the spans under it, a run of its own
    (`aside_key`): it can neither become the grader's root nor count in its
    run (issue 37 item 2: a parentless span of the agent's, started earlier,
    had become the root of its graded run)."""
    trace_ids = {span.span_id for members in groups.values() for span in members}
    held: dict[tuple[str, str], list[SpanFacts]] = {}
    for (agent, key), members in groups.items():
        if not grader_claims(key, members):
            held[(agent, key)] = members
            continue
        kept, aside = _rivals(members, trace_ids)
        held[(agent, key)] = kept
        if aside:
            held[(agent, aside_key(trace_id, key))] = aside
    return held


def _rivals(
    members: list[SpanFacts], trace_ids: set[str]
) -> tuple[list[SpanFacts], list[SpanFacts]]:
    """(the spans that stay, the spans that go aside), in the order given.

    A span stays when a grader's span is above it in the run, or when the
    top of its branch has a parent that has not arrived (a late or lost span
    of the agent's, under the root: it stays as it would in any run, and can
    never be the root). The branch goes aside when its top would be a root
    on its own: no parent, a parent its flags say is remote, or a parent in
    another run of the trace (docs/runs.md "The root span")."""
    by_id = {span.span_id: span for span in members}
    stays: dict[str, bool] = {}

    def decide(span: SpanFacts) -> bool:
        chain: list[str] = []
        current = span
        while True:
            if current.span_id in stays:
                found = stays[current.span_id]
                break
            if current.grader:
                found = True
                break
            chain.append(current.span_id)
            parent = by_id.get(current.parent_span_id)
            if parent is None:
                found = not _may_be_root(current, trace_ids)
                break
            if len(chain) > len(by_id):  # a parent cycle: no root above it, none in it
                found = True
                break
            current = parent
        for span_id in chain:
            stays[span_id] = found
        return found

    kept: list[SpanFacts] = []
    aside: list[SpanFacts] = []
    for span in members:
        (kept if decide(span) else aside).append(span)
    return kept, aside


def _may_be_root(top: SpanFacts, trace_ids: set[str]) -> bool:
    """Whether the top of a branch, its parent not in the run, is a root by
    itself: no parent, a remote parent, or a parent stored in another run."""
    return _alone(top) or top.parent_span_id in trace_ids


@dataclass(frozen=True, slots=True)
class RootDecision:
    root: SpanFacts | None
    waiting_until: float | None  # when orphan_grace may promote the top span


def find_root(
    members: Sequence[SpanFacts], trace_ids: set[str], orphan_grace_s: float, now: float
) -> RootDecision:
    """The span with no parent; else the top-most span when its parent is elsewhere."""
    parentless = [s for s in members if not s.parent_span_id]
    if parentless:
        return RootDecision(min(parentless, key=_start_order), None)
    own = {s.span_id for s in members}
    # No top at all: the parents form a cycle (a span its own parent, A under B
    # under A), which no SDK sends but any client can. Every span is then a
    # candidate, and the earliest is promoted after the orphan grace as an
    # orphan would be, so the run still completes (found by bench/fuzz.py).
    tops = [s for s in members if s.parent_span_id not in own] or list(members)
    top = min(tops, key=_start_order)
    if top.parent_span_id in trace_ids:
        return RootDecision(top, None)  # parent stored in another run of this trace
    if top.flags & FLAG_HAS_IS_REMOTE:
        remote = bool(top.flags & FLAG_IS_REMOTE)
        return RootDecision(top if remote else None, None)
    last_seen = max(s.received_at for s in members)
    promote_at = last_seen + orphan_grace_s
    if now >= promote_at:
        return RootDecision(top, None)
    return RootDecision(None, promote_at)


def _start_order(span: SpanFacts) -> tuple[int, str]:
    return span.start_ns, span.span_id
