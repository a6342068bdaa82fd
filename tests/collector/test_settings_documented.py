"""Every setting is in the README and in docs/operations.md, with its
variable and its serve flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.cli import SERVE_FLAGS
from collector.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("document", ["README.md", "docs/operations.md"])
def test_every_setting_is_documented_with_its_flag(document: str) -> None:
    text = (ROOT / document).read_text()
    flags = {field: flag for flag, (field, _) in SERVE_FLAGS.items()}
    flags["insecure"] = "--insecure"
    for name in Settings.model_fields:
        row = next(
            (line for line in text.splitlines() if line.startswith(f"| `BADGE_{name.upper()}` |")),
            None,
        )
        assert row is not None, f"BADGE_{name.upper()} is not in the {document} settings table"
        assert f"`{flags[name]}`" in row, f"{name}: flag {flags[name]} missing"


def test_every_setting_has_a_serve_flag() -> None:
    flagged = {field for field, _ in SERVE_FLAGS.values()} | {"insecure"}
    assert set(Settings.model_fields) == flagged


def test_flags_win_over_environment(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    from collector.cli import _parser, settings_from

    monkeypatch.setenv("BADGE_HTTP_PORT", "5000")
    monkeypatch.setenv("BADGE_RUN_TIMEOUT_S", "12")
    settings = settings_from(_parser().parse_args(["serve", "--http-port", "6000"]))
    assert settings.http_port == 6000
    assert settings.run_timeout_s == 12
