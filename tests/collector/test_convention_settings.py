"""Users' convention files reach the collector through the one settings
object (CONVENTIONS.md section 4), and the built-ins are documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collector.cli import _parser, settings_from
from collector.conventions import builtin_sources

ROOT = Path(__file__).resolve().parents[2]


def test_badge_conventions_separates_paths_with_colons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BADGE_CONVENTIONS", "/etc/acme.yaml:/srv/more::")
    settings = settings_from(_parser().parse_args(["serve"]))
    assert settings.conventions == ("/etc/acme.yaml", "/srv/more")


def test_the_flag_is_given_once_per_path_and_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BADGE_CONVENTIONS", "/etc/acme.yaml")
    args = _parser().parse_args(["serve", "--conventions", "a.yaml", "--conventions", "b"])
    assert settings_from(args).conventions == ("a.yaml", "b")
    listed = _parser().parse_args(["conventions", "list", "--conventions", "c.yml"])
    assert settings_from(listed).conventions == ("c.yml",)


def test_no_setting_means_the_built_ins_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BADGE_CONVENTIONS", raising=False)
    assert settings_from(_parser().parse_args(["serve"])).conventions == ()


def test_every_built_in_file_is_in_the_documented_order() -> None:
    text = (ROOT / "docs" / "conventions.md").read_text()
    documented = re.findall(r"^\| (\d{3}) \| `([a-z0-9.-]+)` \|", text, re.MULTILINE)
    shipped = [
        tuple(s.file.removeprefix("built-in/")[:-5].split("-", 1)) for s in builtin_sources()
    ]
    assert documented == shipped
