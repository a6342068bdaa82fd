"""The committed openapi.json is the app's current document: schemathesis
fuzzes the served one, clients generate code from the committed one, and
the dashboard's /docs renders the served one; all three must agree."""

from __future__ import annotations

from pathlib import Path

from collector import openapi

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_openapi_json_is_current() -> None:
    assert openapi.main(["--check", str(ROOT / "openapi.json")]) == 0, (
        "openapi.json is stale: run `.venv/bin/python -m collector.openapi openapi.json`"
    )
