"""The recorded corpus (tests/fixtures/corpus), and how to replay it."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import FIXTURES

CORPUS = FIXTURES / "corpus"
SCENARIOS = sorted(p.name for p in CORPUS.iterdir() if (p / "expected.json").exists())


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
    folder = CORPUS / scenario / "payloads"
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
    data: dict[str, Any] = json.loads((CORPUS / scenario / "expected.json").read_text())
    return data


def span_identities(scenario: str) -> set[tuple[str, str]]:
    ids = set()
    for payload in payloads(scenario):
        for rs in payload.message().resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    ids.add((span.trace_id.hex(), span.span_id.hex()))
    return ids
