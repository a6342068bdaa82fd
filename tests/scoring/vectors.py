"""Loads the scoring vectors (tests/fixtures/scoring_vectors.json)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from scoring import RunRecord
from tests.conftest import FIXTURES

VECTORS_PATH = FIXTURES / "scoring_vectors.json"


def load_vectors() -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(VECTORS_PATH.read_text())
    vectors: list[dict[str, Any]] = data["vectors"]
    return vectors


def to_run(raw: dict[str, Any]) -> RunRecord:
    ended = raw.get("ended_at")
    return RunRecord(
        id=raw["id"],
        status=raw["status"],
        success=raw.get("success"),
        latency_ms=raw.get("latency_ms"),
        cost_usd=raw.get("cost_usd"),
        steps=raw.get("steps"),
        task_id=raw.get("task_id"),
        ended_at=datetime.fromisoformat(ended.replace("Z", "+00:00")) if ended else None,
    )
