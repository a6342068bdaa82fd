"""Counts and prices read from span attributes: whatever a client sends,
reading it never raises (an exception here was a 500 at the door)."""

from __future__ import annotations

import math

import pytest

from collector.assembly.facts import as_float, as_int


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, "inf", "nan", "1e400", 1e300])
def test_a_count_that_is_no_finite_integer_is_absent_not_an_error(value: object) -> None:
    assert as_int(value) is None


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, "inf", "-inf", "nan"])
def test_a_price_that_is_not_finite_is_absent_not_an_error(value: object) -> None:
    assert as_float(value) is None
