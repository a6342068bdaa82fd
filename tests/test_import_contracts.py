"""Every module of `collector` has a place in an import contract of
pyproject.toml (the layers from the CLI down to assembly, or the leaf
modules that import none of them): a module in none could import anything,
and lint-imports would not say (collector/agent_metrics.py was in none)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_MODULES = {"__init__", "__main__"}  # the package itself, and `python -m collector`


def contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return found


def placed() -> set[str]:
    """The collector modules the contracts name: in the collector layers, or as sources."""
    names: set[str] = set()
    for contract in contracts():
        if contract.get("containers") == ["collector"]:
            for layer in contract["layers"]:
                names.update(part.strip() for part in layer.replace(":", "|").split("|"))
        for source in contract.get("source_modules", []):
            if source.startswith("collector."):
                names.add(source.removeprefix("collector.").split(".")[0])
    return names


def test_every_collector_module_is_in_an_import_contract() -> None:
    package = ROOT / "collector"
    modules = {
        child.stem
        for child in package.iterdir()
        if (child.suffix == ".py" or (child / "__init__.py").exists())
        and child.stem not in NOT_MODULES
    }
    assert modules - placed() == set()
