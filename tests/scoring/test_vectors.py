"""Every reference vector of docs/scoring.md, one test id each."""

from __future__ import annotations

from typing import Any

import pytest

import scoring
from tests.scoring.vectors import load_vectors, to_run

VECTORS = load_vectors()


def assert_close(actual: Any, expected: Any, field: str, tolerance: float) -> None:
    if expected is None or actual is None:
        assert actual == expected, f"{field}: {actual!r} != {expected!r}"
    elif isinstance(expected, dict):
        assert set(expected) <= set(actual), field
        for key, value in expected.items():
            assert_close(actual[key], value, f"{field}.{key}", tolerance)
    else:
        assert actual == pytest.approx(expected, abs=tolerance), field


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    runs = [to_run(r) for r in vector["runs"]]
    expected = vector["expected"]
    result = scoring.composite(runs)
    if expected["composite"] is None:
        assert result is None
    else:
        assert result is not None
        for field, value in expected["composite"].items():
            tolerance = 0.01 if field == "composite_score" else 1e-6
            assert_close(getattr(result, field), value, field, tolerance)
    radar = scoring.radar(runs, vector.get("weights"))
    for field, value in expected["radar"].items():
        tolerance = 0.01 if field == "composite_score" else 1e-6
        assert_close(getattr(radar, field), value, field, tolerance)
    repeat = scoring.pass_k(runs)
    for field, value in expected["pass_k"].items():
        assert_close(getattr(repeat, field.replace("^", "_")), value, field, 1e-6)


def test_vectors_file_is_not_empty() -> None:
    assert len(VECTORS) >= 40
