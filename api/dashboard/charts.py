"""SVG geometry for the dashboard: the radar and the sparkline, as numbers.

Pure functions, so the shapes are tested without a browser; the templates
only place them. Coordinates are in the SVG's own user units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
AXIS_LABELS = {
    "correctness": "Correctness",
    "latency": "Latency",
    "cost": "Cost",
    "tool_efficiency": "Tool efficiency",
    "robustness": "Robustness",
}
# The compare page's names for the tests docs/loop.md "Compare" names.
TEST_LABELS = {
    "cochran_mantel_haenszel": "Cochran-Mantel-Haenszel",
    "wilcoxon_signed_rank": "Wilcoxon signed-rank",
    "two_proportion_z": "two-proportion z",
    "mann_whitney_u": "Mann-Whitney U",
}
# What a paired task's figures are, per axis (the compare page's evidence).
PAIR_LABELS = {
    "correctness": "Each task's pass rate on each side (the test counts its runs).",
    "latency": "Each task's median latency in ms on each side.",
    "cost": "Each task's median cost in USD on each side.",
    "tool_efficiency": "Each task's median tool steps on each side.",
    "robustness": "Each task's consistency 1 - 4p(1-p) on each side (1: always the same).",
}


@dataclass(frozen=True, slots=True)
class RadarAxis:
    name: str
    label: str
    value: float | None
    needs: int | None  # runs still needed when the value is null
    end: tuple[float, float]  # the axis line's outer end (value 100)
    point: tuple[float, float] | None  # the value's vertex; None without evidence
    label_at: tuple[float, float]
    anchor: str  # text-anchor of the label


@dataclass(frozen=True, slots=True)
class RadarShape:
    size: float
    center: float
    axes: tuple[RadarAxis, ...]
    rings: tuple[str, ...]  # polygon points of the 25/50/75/100 rings

    @property
    def view_box(self) -> str:
        """Room around the axes for their labels."""
        margin = self.size * 0.25
        return f"{-margin:.0f} {-margin / 3:.0f} {self.size + 2 * margin:.0f} {self.size:.0f}"

    def polygon(self) -> str:
        """The vertices of the axes with evidence, in axis order."""
        return " ".join(f"{x:.1f},{y:.1f}" for a in self.axes if a.point for x, y in [a.point])


def _at(center: float, radius: float, index: int) -> tuple[float, float]:
    angle = -math.pi / 2 + 2 * math.pi * index / len(AXES)
    return center + radius * math.cos(angle), center + radius * math.sin(angle)


def radar_shape(
    values: Mapping[str, float | None], needs: Mapping[str, int], size: float = 320.0
) -> RadarShape:
    """Five axes from the top, clockwise; a null axis has no vertex (never 0)."""
    center = size / 2
    radius = size * 0.32
    axes = []
    for index, name in enumerate(AXES):
        value = values.get(name)
        lx, ly = _at(center, radius + 22, index)
        anchor = "middle" if abs(lx - center) < 1 else ("start" if lx > center else "end")
        axes.append(
            RadarAxis(
                name=name,
                label=AXIS_LABELS[name],
                value=value,
                needs=needs.get(name) if value is None else None,
                end=_at(center, radius, index),
                point=_at(center, radius * value / 100, index) if value is not None else None,
                label_at=(lx, ly),
                anchor=anchor,
            )
        )
    rings = tuple(
        " ".join(
            f"{x:.1f},{y:.1f}" for i in range(len(AXES)) for x, y in [_at(center, radius * f, i)]
        )
        for f in (0.25, 0.5, 0.75, 1.0)
    )
    return RadarShape(size=size, center=center, axes=tuple(axes), rings=rings)


@dataclass(frozen=True, slots=True)
class Sparkline:
    points: str  # polyline points; empty when fewer than two values
    dots: tuple[tuple[float, float], ...]
    first: float | None
    last: float | None
    width: float
    height: float


def sparkline(
    values: Sequence[float | None], width: float = 120.0, height: float = 28.0
) -> Sparkline:
    """Composites (0-100) left to right, oldest first; gaps (None) are skipped."""
    known = [(i, v) for i, v in enumerate(values) if v is not None]
    if not known:
        return Sparkline("", (), None, None, width, height)
    step = width / max(len(values) - 1, 1)
    pad = 3.0
    coords = tuple(
        (
            round(i * step if len(values) > 1 else width / 2, 1),
            round(pad + (height - 2 * pad) * (1 - v / 100), 1),
        )
        for i, v in known
    )
    line = " ".join(f"{x},{y}" for x, y in coords) if len(coords) > 1 else ""
    return Sparkline(line, coords, known[0][1], known[-1][1], width, height)
