"""docs/runs.md "Delivery in any order": any order, split, duplicates, door -> same runs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from bench.support.otlp import EPOCH_NS, new_span_id, new_trace_id, request, span
from tests.integration.harness import RUN_OUTCOME_COLUMNS, Collector, running_collector

CONVENTIONS: dict[str, dict[str, dict[str, Any]]] = {
    "genai": {
        "agent": {"gen_ai.operation.name": "invoke_agent"},
        "llm": {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 11,
            "gen_ai.usage.output_tokens": 3,
        },
        "tool": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
    },
    "openinference": {
        "agent": {"openinference.span.kind": "AGENT"},
        "llm": {
            "openinference.span.kind": "LLM",
            "llm.token_count.prompt": 7,
            "llm.token_count.completion": 2,
        },
        "tool": {"openinference.span.kind": "TOOL", "tool.name": "u"},
    },
    "traceloop": {
        "agent": {"traceloop.span.kind": "agent"},
        "llm": {"llm.request.type": "chat", "gen_ai.usage.prompt_tokens": 5},
        "tool": {"traceloop.span.kind": "tool", "gen_ai.tool.name": "v"},
    },
    "vercel": {
        "agent": {"ai.operationId": "ai.generateText"},
        "llm": {"ai.operationId": "ai.generateText.doGenerate", "gen_ai.usage.input_tokens": 9},
        "tool": {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "w"},
    },
}
KINDS = ["agent", "llm", "tool", "other"]
COMPARED = RUN_OUTCOME_COLUMNS


@st.composite
def traces(draw: st.DrawFn) -> list[Span]:
    trace_id = new_trace_id()
    root = new_span_id()
    spans = [
        span(
            trace_id,
            root,
            "badge.run",
            start=EPOCH_NS + 1_000,
            end=EPOCH_NS + 9_000_000,
            attributes={
                "badge.task.id": draw(st.sampled_from(["a", "b"])),
                "badge.run.success": draw(st.booleans()),
            },
            status=draw(st.sampled_from([0, 1, 2])),
        )
    ]
    ids = [root]
    for i in range(draw(st.integers(1, 14))):
        parent = draw(st.sampled_from(ids))
        kind = draw(st.sampled_from(KINDS))
        convention = draw(st.sampled_from(sorted(CONVENTIONS)))
        attrs = dict(CONVENTIONS[convention].get(kind, {}))
        if kind != "other" and draw(st.integers(0, 9)) == 0:
            attrs["badge.run.id"] = f"sub-{i}"
        span_id = new_span_id()
        start = EPOCH_NS + draw(st.integers(2_000, 5_000_000))
        spans.append(
            span(
                trace_id,
                span_id,
                f"{kind}-{i}",
                parent=parent,
                start=start,
                end=start + draw(st.integers(0, 3_000_000)),
                attributes=attrs,
                status=draw(st.sampled_from([0, 2])),
            )
        )
        ids.append(span_id)
    return spans


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> Iterator[tuple[Collector, str]]:
    directory = Path(tmp_path_factory.mktemp("prop"))
    with running_collector(directory, database_url=module_database_url) as c:
        yield c, c.service.keys.create("reference-owner")


def runs_of(c: Collector, owner: str, trace_id: str) -> list[tuple[Any, ...]]:
    return sorted(
        c.query(
            f"SELECT {', '.join(COMPARED)} FROM runs WHERE owner = ? AND trace_id = ?",
            owner,
            trace_id,
        ),
        key=repr,
    )


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(spans=traces(), seed=st.integers(0, 2**32))
def test_any_delivery_gives_the_same_runs(
    shared: tuple[Collector, str], spans: list[Span], seed: int
) -> None:
    collector, reference_key = shared
    rnd = random.Random(seed)
    trace_id = spans[0].trace_id.hex()
    whole = request(spans, "prop-agent").SerializeToString()
    assert collector.post(whole, key=reference_key).status_code == 200
    pieces = list(spans) + rnd.sample(spans, k=rnd.randint(0, len(spans)))  # duplicates
    rnd.shuffle(pieces)
    cuts = sorted(rnd.sample(range(1, len(pieces)), k=min(len(pieces) - 1, rnd.randint(0, 4))))
    for chunk in [pieces[a:b] for a, b in zip([0, *cuts], [*cuts, len(pieces)], strict=True)]:
        body = request(chunk, "prop-agent").SerializeToString()
        if rnd.random() < 0.5:
            assert collector.post(body, gzip=rnd.random() < 0.5).status_code == 200
        else:
            collector.export_grpc(body, compress=rnd.random() < 0.5)
    collector.settle()
    expected = runs_of(collector, "reference-owner", trace_id)
    assert expected
    assert runs_of(collector, "owner-a", trace_id) == expected
