"""The recorded traces, and how to replay them.

Two folders hold recordings in one format (tests/fixtures/corpus/README.md):
`corpus/` is the specification's copy (checked against ../shared), and
`recordings/` holds the frameworks this project recorded itself, each with its
recording script under `recordings/` at the top of the repository.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import FIXTURES

CORPUS = FIXTURES / "corpus"
RECORDINGS = FIXTURES / "recordings"


def _scenarios() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root in (CORPUS, RECORDINGS):
        if root.is_dir():
            found.update({p.name: p for p in root.iterdir() if (p / "expected.json").exists()})
    return found


FOLDERS = _scenarios()
SCENARIOS = sorted(FOLDERS)


@dataclass(frozen=True)
class Payload:
    body: bytes
    transport: str
    content_type: str
    content_encoding: str | None

    def message(self) -> ExportTraceServiceRequest:
        """The decoded request, whatever door it was recorded at."""
        raw = gzip.decompress(self.body) if self.content_encoding == "gzip" else self.body
        if self.content_type.startswith("application/json"):
            from proto import parse_request

            parsed: ExportTraceServiceRequest = parse_request(raw, "json")
            return parsed
        return ExportTraceServiceRequest.FromString(raw)


def payloads(scenario: str) -> list[Payload]:
    folder = FOLDERS[scenario] / "payloads"
    found = []
    for meta_path in sorted(folder.glob("*.meta.json")):
        meta = json.loads(meta_path.read_text())
        body = (folder / meta_path.name.replace(".meta.json", ".bin")).read_bytes()
        found.append(
            (
                meta["seq"],
                Payload(
                    body,
                    meta["transport"],
                    meta["content_type"] or "",
                    meta.get("content_encoding"),
                ),
            )
        )
    return [p for _, p in sorted(found, key=lambda item: item[0])]


def expected(scenario: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FOLDERS[scenario] / "expected.json").read_text())
    return data


# Runs whose LLM spans carry no usage, so no span-based count can hold their tokens
# (each recording's spans_summary.md says which): scenario -> run indexes.
NO_USAGE_ON_SPANS: dict[str, frozenset[int]] = {
    # runs 12-13 use a LiteLLM-style model whose generation spans carry a model
    # but no gen_ai.usage.* ("Token usage is read only from the Responses API object")
    "openai_agents_traceloop": frozenset({12, 13}),
}


def no_usage_on_spans(scenario: str) -> frozenset[int]:
    """The runs of a recording whose tokens its spans cannot show."""
    return NO_USAGE_ON_SPANS.get(scenario, frozenset())


def span_identities(scenario: str) -> set[tuple[str, str]]:
    ids = set()
    for payload in payloads(scenario):
        for rs in payload.message().resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    ids.add((span.trace_id.hex(), span.span_id.hex()))
    return ids
