"""One run's spans as a tree: parent links, depth from the root, and the
order every "first found" rule reads them in (docs/runs.md "Which span wins")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from collector.assembly.facts import SpanFacts
from collector.conventions import LLM


class RunTree:
    """Parent links, depth and candidate order inside one run; and the
    trace's span tree around it (`trace`: every span of the trace by id, the
    run's own when not given), where a tool call seen by another service's
    spans is found (assembly.counting)."""

    def __init__(
        self,
        members: Sequence[SpanFacts],
        root: SpanFacts | None,
        trace: Mapping[str, SpanFacts] | None = None,
    ) -> None:
        if trace is not None and len(trace) == len(members):
            self.by_id: Mapping[str, SpanFacts] = trace  # the run is the whole trace
        else:
            self.by_id = {s.span_id: s for s in members}
        self.trace = self.by_id if trace is None else trace
        self.root = root
        self.depth = _depths(members, self.by_id, root)
        self.ordered = sorted(members, key=self.order)
        # LLM spans by parent: a call prepared beside another is found among
        # its siblings (assembly.counting); only LLM spans are ever looked up.
        self.llm_children: dict[str, list[SpanFacts]] = {}
        for span in self.ordered:
            if span.role == LLM:
                self.llm_children.setdefault(span.parent_span_id, []).append(span)

    def order(self, span: SpanFacts) -> tuple[int, int, str]:
        return self.depth[span.span_id], span.start_ns, span.span_id

    def nearest(
        self, span: SpanFacts, roles: tuple[str, ...], *, in_trace: bool = False
    ) -> SpanFacts | None:
        """The closest ancestor with one of these roles: inside the run, or
        anywhere in the trace's span tree (`in_trace`), whatever run, agent
        or service it belongs to."""
        by_id = self.trace if in_trace else self.by_id
        current = by_id.get(span.parent_span_id)
        steps = 0
        limit = len(by_id)
        while current is not None and steps <= limit:
            if current.role in roles:
                return current
            current = by_id.get(current.parent_span_id)
            steps += 1
        return None

    def first_fact(self, key: str) -> object:
        for span in self.ordered:
            if key in span.facts:
                return span.facts[key]
        return None


def _depths(
    members: Sequence[SpanFacts], by_id: Mapping[str, SpanFacts], root: SpanFacts | None
) -> dict[str, int]:
    """Distance from the root; a detached subtree's top is 1 (it sorts after
    the root). Each span's chain is walked only up to a span already known."""
    depth: dict[str, int] = {}
    if root is not None:
        depth[root.span_id] = 0
    limit = len(by_id)
    for span in members:
        if span.span_id in depth:
            continue
        chain = [span.span_id]
        parent = by_id.get(span.parent_span_id)
        while parent is not None:
            known = depth.get(parent.span_id)
            if known is not None:
                base = known + 1
                break
            chain.append(parent.span_id)
            if len(chain) > limit:  # a parent cycle: no root above it
                base = 0
                break
            parent = by_id.get(parent.parent_span_id)
        else:
            base = 1
        for offset, member in enumerate(reversed(chain)):
            depth[member] = base + offset
    return depth
