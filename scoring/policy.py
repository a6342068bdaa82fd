"""Every constant of the scoring policy (docs/scoring.md), in one place.

Nothing else in the project hard-codes a weight, an anchor or a cohort size:
change the policy here and bump `SCORING_POLICY`.
"""

from __future__ import annotations

from typing import Final

SCORING_POLICY: Final = "2026-07-zero-success-v1"

# docs/scoring.md "The composite": headline composite weights.
WEIGHT_SUCCESS: Final = 0.40
WEIGHT_RELIABILITY: Final = 0.30
WEIGHT_COST: Final = 0.30

# Below this many completed runs consistency is the neutral 1.0.
CONSISTENCY_MIN_RUNS: Final = 5

# Piecewise-linear anchors: (x, score in [0, 1]); clamped outside the range.
LATENCY_ANCHORS_MS: Final[tuple[tuple[float, float], ...]] = (
    (500.0, 1.00),
    (2000.0, 0.80),
    (5000.0, 0.50),
    (10000.0, 0.00),
)
COST_ANCHORS_USD: Final[tuple[tuple[float, float], ...]] = (
    (0.001, 1.00),
    (0.010, 0.80),
    (0.050, 0.50),
    (0.100, 0.20),
    (0.200, 0.00),
)

COMPOSITE_DECIMALS: Final = 2

# docs/scoring.md "The fitness radar": fitness radar.
RADAR_COHORT_SIZE: Final = 100
RADAR_AXES: Final = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
RADAR_DEFAULT_WEIGHT: Final = 0.2
RADAR_LATENCY_MIN_RUNS: Final = 5
RADAR_LATENCY_BASE_MS: Final = 500.0
RADAR_LATENCY_POINTS_PER_100MS: Final = 2.0
RADAR_COST_BASE_USD: Final = 0.01
RADAR_COST_USD_PER_POINT: Final = 0.001
RADAR_STEPS_BASE: Final = 3.0
RADAR_POINTS_PER_STEP: Final = 10.0
RADAR_ROBUSTNESS_MIN_OUTCOMES: Final = 2

# docs/scoring.md "pass^k": repeatability.
PASS_K_LEVELS: Final = (1, 3, 5)
PASS_K_MIN_OUTCOMES: Final = 3

# docs/runs.md "The fields of a run", cost_usd: the reference price used when no cost is
# reported, USD per million tokens.
REFERENCE_INPUT_USD_PER_MTOK: Final = 5.0
REFERENCE_OUTPUT_USD_PER_MTOK: Final = 15.0

TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "timeout"})

# Compare (docs/loop.md "Compare", revision 2): verdicts at this level after
# Holm's correction across the axes; an axis is tested paired by task with at
# least COMPARE_MIN_PAIRED_TASKS tasks on both sides, unpaired otherwise, and
# an unpaired test needs COMPARE_MIN_VALUES values on each side.
COMPARE_ALPHA: Final = 0.05
COMPARE_MIN_PAIRED_TASKS: Final = 5
COMPARE_MIN_VALUES: Final = 5
COMPARE_P_DECIMALS: Final = 6
COMPARE_AXIS_DECIMALS: Final = 2
# A significant change is `regressed` / `improved` only when its axis also
# moved by at least this many points (|delta|); below, `unchanged`. The
# default 0 keeps docs/loop.md's verdicts (and the compare vectors) as they
# are; docs/loop.md "Small changes" suggests COMPARE_GATE_MIN_EFFECT for a CI
# gate. One axis point is 50 ms of p50 latency past 500 ms, $0.001 of p50
# cost past $0.01, 0.1 steps past 3, one point of pass rate; in
# `bench/compare_power.py --min-effect-only` (1,000 compares a cell) it took
# the detection of a 25% slowdown from 45.2% to 43.8% (10 tasks x 3 rounds)
# and 94.8% to 93.2% (20 x 3), and that of two broken tasks from 15.7% to
# 15.6%; what it drops are changes the radar does not score (a median cost
# under $0.01 or steps under 3 both sides, so the axis stays at 100).
COMPARE_MIN_EFFECT: Final = 0.0
COMPARE_GATE_MIN_EFFECT: Final = 1.0

# Diagnostics: a run costs an axis points past these values (the radar's own
# anchors: latency and cost lose points above them, steps above 3).
DIAGNOSE_LATENCY_MS: Final = RADAR_LATENCY_BASE_MS
DIAGNOSE_COST_USD: Final = RADAR_COST_BASE_USD
DIAGNOSE_STEPS: Final = RADAR_STEPS_BASE

# Screening graders (SCREEN.md section 2): the `words` grader passes when at
# least this share of the expected answer's words is in the output.
WORDS_PASS_SHARE: Final = 0.7
