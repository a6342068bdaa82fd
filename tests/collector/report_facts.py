"""Facts for the report writers' tests: a screening as `screen` gathers it, and a compare
document shaped as `GET /agents/{id}/compare` answers it (docs/loop.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import xmlschema

from collector.reports.facts import CompareFacts, RoundFacts, ScreeningFacts, TaskFacts

XSD = Path(__file__).resolve().parents[1] / "fixtures" / "junit" / "junit.xsd"
# Every kind of text an agent may answer that a report must still carry: XML 1.0's
# forbidden characters (NUL, escape, form feed, a lone surrogate, U+FFFE), markup that
# would close the element or the Markdown around it, an HTML tag, right-to-left override.
HOSTILE = (
    "A\x00B\x1b[31mred\x0c\ud800\ufffe ]]> </failure> <script>alert(1)</script> "
    "```\n</details>\n~~~ | a | b | $x$ \u202etxt.exe *bold* [link](javascript:x) &amp;"
)


def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def rounds(*states: str, output: str = "wrong", run: str = "run") -> tuple[RoundFacts, ...]:
    """Rounds 1.. in these states; `error:<class>` for a dispatch that got no answer."""
    made = []
    for number, state in enumerate(states, 1):
        if state.startswith("error:"):
            cls = state.removeprefix("error:")
            made.append(
                RoundFacts(number, "error", cls, None, f"{cls} happened", f"{run}-{number}", 10.0)
            )
        elif state == "failed":
            made.append(RoundFacts(number, "failed", "none", output, None, f"{run}-{number}", 10.0))
        elif state == "missing":
            made.append(RoundFacts(number, "missing"))
        else:
            made.append(RoundFacts(number, "passed", "none", None, None, f"{run}-{number}", 10.0))
    return tuple(made)


def task(
    task_id: str, *states: str, output: str = "wrong", expected: str | None = "right"
) -> TaskFacts:
    return TaskFacts(
        task_id, "contains", expected, rounds(*states, output=output, run=task_id), 1250.0
    )


def compare_body(**verdicts: str) -> dict[str, Any]:
    """A compare of 1.0 with 2.0; each axis `unchanged` unless named."""
    axes = {}
    for axis in ("correctness", "latency", "cost", "tool_efficiency", "robustness"):
        verdict = verdicts.get(axis, "unchanged")
        evidence = verdict != "insufficient_evidence"
        axes[axis] = {
            "base": 100.0,
            "head": 80.0 if verdict == "regressed" else 100.0,
            "delta": -20.0 if verdict == "regressed" else 0.0,
            "verdict": verdict,
            "test": "cochran_mantel_haenszel" if evidence else None,
            "paired_tasks": 10 if evidence else None,
            "p_value": (0.001565 if verdict == "regressed" else 0.5) if evidence else None,
            "p_adjusted": (0.007827 if verdict == "regressed" else 1.0) if evidence else None,
        }
        if not evidence:
            axes[axis]["needed"] = "5 paired tasks with 2 runs each"
    side = {"runs_counted": 30, "composite_score": 90.0}
    return {
        "agent_id": "agent-1",
        "base": {**side, "version": "1.0"},
        "head": {**side, "version": "2.0"},
        "axes": axes,
        "composite": {"base": 100.0, "head": 80.0, "delta": -20.0},
        "tasks": [
            {"task_id": "refund", "base_n": 3, "base_successes": 3, "head_n": 3,
             "head_successes": 0, "change": "broken"},
            {"task_id": "greet", "base_n": 3, "base_successes": 3, "head_n": 3,
             "head_successes": 3, "change": "same"},
        ],
        "regressed": any(v == "regressed" for v in verdicts.values()),
        "min_effect": 0.0,
    }  # fmt: skip


def compared(**verdicts: str) -> CompareFacts:
    return CompareFacts(compare_body(**verdicts), "support-bot", "agent-1", {"base": "1.0"})


def screening(*tasks: TaskFacts, **extra: Any) -> ScreeningFacts:
    values: dict[str, Any] = dict(
        screening_id="s-1",
        agent="support-bot",
        version="2.0",
        suite_name="core",
        suite_digest="ab" * 32,
        rounds=max((len(t.rounds) for t in tasks), default=3),
        tasks=tasks,
        started_at="2026-01-02T03:04:05",
        elapsed_s=12.25,
        outcome="screened",
        exit_code=0,
        document={
            "composite_score": 81.5,
            "pass_1": 0.8,
            "pass_3": 0.7,
            "pass_5": 0.0,
            "total_runs": 9,
            "completed_runs": 9,
            "successful_runs": 6,
            "radar": {"correctness": 80.0, "latency": 100.0, "cost": None,
                      "tool_efficiency": 90.0, "robustness": 75.0},
        },
        verified_state="verified",
        agent_id="agent-1",
    )  # fmt: skip
    values.update(extra)
    return ScreeningFacts(**values)
