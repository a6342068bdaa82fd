"""The steps of a decode job after wire decoding, one job each.

    proto.decode_body            bytes -> WireSpans            (decode)
    recognise                    WireSpans -> Recognitions, facts (recognise)
    build_rows                   -> SpanRows, agents, resources  (rows)
    runs.preassemble.preassemble -> runs of this request alone (assemble)

`decoding.decode_job` calls them in turn. Each takes and returns named
records (WireSpan, Recognition, SpanRow): no tuple whose positions must stay
in step with another module's crosses between them. Imported by the decoder
processes: no database stack, no web framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from collector.assembly.facts import resource_facts, span_facts
from collector.assembly.identity import agent_id, agent_name
from collector.conventions import ConventionSet, Recognition, recognise_span
from collector.runs.run_rows import encode_facts
from collector.storage.rows import SpanRow, resource_digest
from collector.storage.span_rows import Sender, span_row_for
from proto import WireSpan

# Memory a decoded span takes beyond its encoded bytes and facts (the row
# tuple, its strings, the pre-assembled run): 732 B per span measured with
# tracemalloc over decode_job on bench/payloads.py requests; rounded up.
# The in-flight bound (ingest.admission) counts it.
ROW_OVERHEAD_BYTES = 1024


class Origin(NamedTuple):
    """Who a resource's spans belong to: computed once per resource."""

    agent_id: str
    agent_name: str
    digest: bytes  # its key in `resources`
    encoded: bytes
    inherited: dict[str, str]  # the facts its spans inherit (assembly.facts)


@dataclass(slots=True)
class Readings:
    """What recognition said of each span, in the spans' order."""

    recognitions: list[Recognition]
    facts: list[dict[str, Any]]
    origins: list[Origin]


@dataclass(slots=True)
class BuiltRows:
    """A request's rows, and the agents and resources they name."""

    rows: list[SpanRow] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> name
    resources: dict[bytes, bytes] = field(default_factory=dict)  # digest -> encoded
    memory_bytes: int = 0  # what the rows hold in memory, roughly (admission)


_ids: dict[tuple[str, str], str] = {}


def _agent_id(owner: str, name: str) -> str:
    """`agent_id`, remembered: a uuid5 costs more than the lookup."""
    key = (owner, name)
    ident = _ids.get(key)
    if ident is None:
        if len(_ids) > 100_000:
            _ids.clear()
        ident = _ids[key] = agent_id(owner, name)
    return ident


def origins_of(spans: Sequence[WireSpan], owner: str) -> list[Origin]:
    """Each span's origin; spans of one ResourceSpans share one resource
    object, so each resource is read once."""
    known: dict[int, Origin] = {}
    found = []
    for span in spans:
        resource = span.resource
        origin = known.get(id(resource))
        if origin is None:
            name = agent_name(resource)
            encoded = span.resource_encoded
            origin = known[id(resource)] = Origin(
                agent_id=_agent_id(owner, name),
                agent_name=name,
                digest=resource_digest(encoded),
                encoded=encoded,
                inherited=resource_facts(resource),
            )
        found.append(origin)
    return found


def recognise(spans: Sequence[WireSpan], conventions: ConventionSet, owner: str) -> Readings:
    """Each span recognised (collector.conventions.recognise_span), and the
    facts run assembly reads of it."""
    origins = origins_of(spans, owner)
    recognitions = [recognise_span(span, conventions) for span in spans]
    facts = [
        span_facts(recognition, span.name, span.attributes, origin.inherited, span.events)
        for span, recognition, origin in zip(spans, recognitions, origins, strict=True)
    ]
    return Readings(recognitions, facts, origins)


def build_rows(spans: Sequence[WireSpan], readings: Readings, sender: Sender) -> BuiltRows:
    """The `spans` rows of a request (storage.span_rows), and the agents and
    resources they name."""
    built = BuiltRows()
    rows, agents, resources = built.rows, built.agents, built.resources
    size = 0  # bytes of the rows' encoded spans and facts
    for origin in {id(o): o for o in readings.origins}.values():  # a few, shared by spans
        agents[origin.agent_id] = origin.agent_name
        resources[origin.digest] = origin.encoded
    for span, recognition, facts, origin in zip(
        spans, readings.recognitions, readings.facts, readings.origins, strict=True
    ):
        text = encode_facts(facts)
        size += len(span.encoded) + len(text)
        rows.append(span_row_for(span, sender, origin.agent_id, origin.digest, recognition, text))
    built.memory_bytes = ROW_OVERHEAD_BYTES * len(rows) + size
    return built
