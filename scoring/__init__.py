"""The scoring core: pure functions from run records to the three views.

Imports nothing of ours and no I/O library (import-linter checks it).
"""

from scoring._math import median
from scoring.compare import (
    AxisChange,
    Comparison,
    CompositeChange,
    Side,
    TaskChange,
    Version,
    compare,
    compare_versions,
    validate_min_effect,
)
from scoring.composite import composite, composite_from_aggregates, composite_trend
from scoring.diagnostics import AxisDiagnosis, Diagnosis, RunOffender, TaskOffender, diagnose
from scoring.graders import GRADERS, Grade, expected_text, grade, norm, words
from scoring.pairing import TaskPair
from scoring.radar import default_weights, evidence_needed, radar, radar_cohort
from scoring.repeatability import pass_hat_k, pass_k, pass_k_from_counts
from scoring.types import Composite, Radar, Repeatability, RunRecord, TaskRepeatability
from scoring.verification import VerifiedState, verified_state
from scoring.weights import parse_weights, validate_weights

__all__ = [
    "GRADERS",
    "Grade",
    "expected_text",
    "grade",
    "norm",
    "words",
    "AxisChange",
    "AxisDiagnosis",
    "Diagnosis",
    "RunOffender",
    "TaskOffender",
    "Version",
    "compare_versions",
    "validate_min_effect",
    "default_weights",
    "evidence_needed",
    "diagnose",
    "Comparison",
    "Composite",
    "CompositeChange",
    "Side",
    "TaskChange",
    "TaskPair",
    "compare",
    "Radar",
    "Repeatability",
    "RunRecord",
    "TaskRepeatability",
    "VerifiedState",
    "verified_state",
    "composite",
    "composite_from_aggregates",
    "composite_trend",
    "parse_weights",
    "median",
    "pass_hat_k",
    "pass_k",
    "pass_k_from_counts",
    "radar",
    "radar_cohort",
    "validate_weights",
]
