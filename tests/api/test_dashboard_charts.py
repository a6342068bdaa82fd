"""The dashboard's SVG geometry: five axes, a null axis never drawn as 0."""

from __future__ import annotations

import math

import pytest

from api.dashboard.charts import AXES, radar_shape, sparkline


def test_the_radar_has_five_axes_from_the_top_clockwise() -> None:
    shape = radar_shape(dict.fromkeys(AXES, 100.0), {})
    assert [a.name for a in shape.axes] == list(AXES)
    top = shape.axes[0]
    assert top.end[0] == pytest.approx(shape.center) and top.end[1] < shape.center
    assert top.point == top.end  # 100 reaches the outer ring
    radii = {round(math.dist(a.end, (shape.center, shape.center)), 6) for a in shape.axes}
    assert len(radii) == 1 and len(shape.rings) == 4


def test_a_null_axis_has_no_vertex_and_says_how_many_runs_it_needs() -> None:
    values = {"correctness": 50.0, "latency": None, "cost": 0.0, "tool_efficiency": 80.0}
    shape = radar_shape(values, {"latency": 3, "robustness": 2})
    by_name = {a.name: a for a in shape.axes}
    assert by_name["latency"].point is None and by_name["latency"].needs == 3
    assert by_name["robustness"].point is None and by_name["robustness"].needs == 2
    assert by_name["cost"].point == pytest.approx((shape.center, shape.center))  # a real 0
    assert by_name["cost"].needs is None
    assert len(shape.polygon().split()) == 3  # only the axes with evidence


def test_the_sparkline_skips_gaps_and_scales_0_to_100_top_down() -> None:
    line = sparkline([0.0, None, 100.0], width=100, height=20)
    assert line.dots == ((0.0, 17.0), (100.0, 3.0))
    assert line.points == "0.0,17.0 100.0,3.0"
    assert (line.first, line.last) == (0.0, 100.0)
    single = sparkline([42.0])
    assert single.points == "" and len(single.dots) == 1
    assert sparkline([]).dots == () and sparkline([None]).first is None
