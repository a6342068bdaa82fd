"""Helpers of the screening tests: suites on disk, `screen` in-process, runs read back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from collector.cli import main
from tests.integration.harness import Collector

API = "/api/v1"


@dataclass
class Screened:
    code: int
    out: str
    err: str


def write_suite(
    tmp_path: Path, tasks: list[dict[str, Any]], name: str = "support", **extra: Any
) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "tasks": tasks, **extra}, sort_keys=False))
    return path


def run_screen(
    capsys: pytest.CaptureFixture[str], c: Collector, *argv: str, key: str | None = None
) -> Screened:
    """`badge-collector screen ...` in this process, against collector `c`."""
    capsys.readouterr()
    args = ["screen", *argv, "--url", c.http_url, "--settle", "0.2"]
    if key is not None:
        args += ["--key", key]
    code = main(args)
    captured = capsys.readouterr()
    return Screened(code, captured.out, captured.err)


def runs_of(c: Collector, agent: str, key: str | None = None) -> list[dict[str, Any]]:
    """The agent's runs through the API, oldest first."""
    headers = {"authorization": f"Bearer {key or c.key}"}
    agents = c.http.get(f"{c.http_url}{API}/agents", params={"all": "true"}).json()["items"]
    ids = [a["id"] for a in agents if a["name"] == agent]
    if not ids:
        return []
    reply = c.http.get(
        f"{c.http_url}{API}/runs", params={"agent_id": ids[0], "page_size": 500}, headers=headers
    )
    assert reply.status_code == 200, reply.text
    return list(reversed(reply.json()["items"]))


def root_of(c: Collector, run_id: str) -> dict[str, Any]:
    """The run's root span from /runs/{id}/trace (the owner's key)."""
    reply = c.http.get(
        f"{c.http_url}{API}/runs/{run_id}/trace", headers={"authorization": f"Bearer {c.key}"}
    )
    assert reply.status_code == 200, reply.text
    trace = reply.json()
    roots = [span for span in _walk(trace["spans"]) if span["name"] == "badge.run"]
    assert len(roots) == 1, json.dumps(trace)[:2000]
    return roots[0]


def _walk(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for span in spans:
        found.append(span)
        found.extend(_walk(span.get("children") or []))
    return found


def event(span: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [e for e in span["events"] if e["name"] == name]
    return dict(found["attributes"])
