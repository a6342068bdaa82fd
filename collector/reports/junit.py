"""A screening and a compare as JUnit XML, the test report every CI system renders.

The shape is the one Jenkins's xUnit plugin schema (junit-10.xsd) describes
and GitHub's and GitLab's JUnit readers take: `<testsuites>` holding one
`<testsuite>` per screening, one `<testcase>` per task, and one more
`<testsuite>` for the compare, one `<testcase>` per radar axis (issue 41).
A task whose every round got no answer to grade is an `<error>` (the agent
or the way to it is down, not wrong); one with any other failed round is a
`<failure>` whose text shows, per failed round, what came back against the
answer key. A command that failed for a reason no task shows (an incomplete
screening, runs that never arrived, a gate that could not compare) adds an
`<error>` testcase `screening` saying why, so the report is never green then.

Every text passes through `text.xml_text`: ElementTree escapes
markup but would write an agent's control characters as they are, and the
file would no longer parse. The texts come cut to `text.TEXT_LIMIT` in the
facts (the screener keeps no more of an answer than a report shows).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from collector.reports.facts import CompareFacts, RoundFacts, ScreeningFacts, TaskFacts
from collector.reports.text import xml_text
from collector.reports.words import moved_tasks, num, sides, tally, test_name

AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")


def _seconds(value: float | None) -> str:
    """JUnit's time: seconds, a plain decimal (the xsd's SUREFIRE_TIME has no exponent)."""
    return f"{max(0.0, value or 0.0):.3f}"


def _element(tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.Element(tag, {k: xml_text(v) for k, v in attributes.items()})
    if text is not None:
        element.text = xml_text(text)
    return element


def _properties(values: list[tuple[str, Any]]) -> ET.Element:
    """`<properties>` of the values that are known (None is left out)."""
    properties = ET.Element("properties")
    for name, value in values:
        if value is not None:
            properties.append(_element("property", name=name, value=str(value)))
    return properties


def _round_lines(r: RoundFacts) -> list[str]:
    run = f" (run {r.run_id})" if r.run_id else ""
    if r.state == "missing":
        return [f"round {r.round}: no run of it is in the collector{run}"]
    lines = [f"round {r.round}: {r.cause}{run}"]
    if r.detail:
        lines.append(f"  why: {r.detail}")
    if r.output is not None:
        lines += ["  output:", r.output]
    elif r.state == "failed":
        lines.append("  output: (not seen by this screener: it was dispatched before --resume)")
    return lines


def failure_text(task: TaskFacts) -> str:
    """The grader and the answer key once, then every failed round's output."""
    lines = [f"grader: {task.grader}"]
    if task.expected is not None:
        lines += ["expected:", task.expected]
    for r in task.failed:
        lines += ["", *_round_lines(r)]
    return "\n".join(lines)


def _testcase(task: TaskFacts, suite_name: str) -> ET.Element:
    case = _element("testcase", classname=suite_name, name=task.task_id, time=_seconds(_s(task)))
    if task.failed:
        tag = "error" if task.errored else "failure"
        first = task.failed[0].cause
        case.append(_element(tag, failure_text(task), message=task.summary(), type=first))
    return case


def _s(task: TaskFacts) -> float | None:
    return None if task.latency_p50_ms is None else task.latency_p50_ms / 1000


def screening_suite(facts: ScreeningFacts) -> ET.Element:
    """One `<testsuite>`: the screening's tasks, its scores and run ids as properties."""
    document = facts.document or {}
    failures = sum(1 for t in facts.failed_tasks if not t.errored)
    errors = sum(1 for t in facts.failed_tasks if t.errored)
    suite = _element(
        "testsuite",
        name=f"{facts.agent} {facts.version or '(no version)'}, suite {facts.suite_name}",
        tests=str(len(facts.tasks)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=_seconds(facts.elapsed_s),
        timestamp=facts.started_at,
        id=facts.screening_id,
    )
    runs = [
        (f"run:{task.task_id}/{r.round}", r.run_id) for task in facts.tasks for r in task.rounds
    ]
    certificate = facts.certificate
    suite.append(
        _properties(
            [
                ("screening_id", facts.screening_id),
                ("agent", facts.agent),
                ("agent_id", facts.agent_id),
                ("version", facts.version),
                ("suite", facts.suite_name),
                ("suite_digest", facts.suite_digest),
                ("rounds", facts.rounds),
                ("outcome", facts.outcome),
                ("exit_code", facts.exit_code),
                ("composite", _figure(document.get("composite_score"), 2)),
                ("verified_state", facts.verified_state),
                ("pass_1", _figure(document.get("pass_1"), 3)),
                ("pass_3", _figure(document.get("pass_3"), 3)),
                ("pass_5", _figure(document.get("pass_5"), 3)),
                ("certificate", None if certificate is None else certificate.path),
                (
                    "certificate_statement_digest",
                    None if certificate is None else certificate.statement_digest,
                ),
                *runs,
            ]
        )
    )
    for task in facts.tasks:
        suite.append(_testcase(task, facts.suite_name))
    if _unexplained(facts):
        suite.append(_outcome_case(facts))
        suite.set("tests", str(len(facts.tasks) + 1))
        suite.set("errors", str(errors + 1))
    return suite


def _unexplained(facts: ScreeningFacts) -> bool:
    """The command failed for a reason no task and no axis shows: the screening is
    incomplete, its runs or certificate are missing, the gate could not compare. A CI
    page that reads only the JUnit report must not show it green."""
    return facts.exit_code == 2 or (facts.exit_code == 1 and facts.compare is None)


def _outcome_case(facts: ScreeningFacts) -> ET.Element:
    case = _element("testcase", classname="badge-collector", name="screening", time="0.000")
    text = "\n".join([f"exit code {facts.exit_code}: {facts.outcome}", *facts.notes])
    case.append(_element("error", text, message=facts.outcome, type=f"exit_{facts.exit_code}"))
    return case


def _figure(value: Any, digits: int) -> str | None:
    return None if value is None else f"{value:.{digits}f}"


def _axis_case(axis: str, change: dict[str, Any], compare: dict[str, Any]) -> ET.Element:
    case = _element("testcase", classname="compare", name=axis, time="0.000")
    verdict = str(change.get("verdict"))
    figures = (
        f"{num(change.get('base'))} -> {num(change.get('head'))} ({num(change.get('delta'))}), "
        f"{test_name(change)}, p {num(change.get('p_value'), 6)}, "
        f"p adj. {num(change.get('p_adjusted'), 6)}"
    )
    if verdict == "regressed":
        lines = [
            f"base {num(change.get('base'))}, head {num(change.get('head'))}, "
            f"delta {num(change.get('delta'))}",
            f"test {test_name(change)}",
            f"p {num(change.get('p_value'), 6)}, p adjusted (Holm) "
            f"{num(change.get('p_adjusted'), 6)}",
        ]
        if axis == "correctness":
            lines += [
                f"task {t['task_id']}: {t['change']} ({tally(t, 'base')} -> {tally(t, 'head')})"
                for t in moved_tasks(compare)
            ]
        case.append(
            _element("failure", "\n".join(lines), message=f"regressed: {figures}", type="regressed")
        )
    elif verdict == "insufficient_evidence":
        needed = change.get("needed")
        why = f": {needed}" if needed else ""
        case.append(_element("skipped", message=f"insufficient evidence{why}"))
    return case


def compare_suite(facts: CompareFacts) -> ET.Element:
    """One `<testsuite>` for a compare: an axis that regressed is a failure, an axis
    without enough evidence is skipped (it was not tested), the others pass."""
    compare = facts.body
    base, head = sides(compare)
    axes = compare.get("axes") or {}
    verdicts = [str((axes.get(axis) or {}).get("verdict")) for axis in AXES if axis in axes]
    suite = _element(
        "testsuite",
        name=f"compare {facts.agent} {base} -> {head}",
        tests=str(len(verdicts)),
        failures=str(verdicts.count("regressed")),
        errors="0",
        skipped=str(verdicts.count("insufficient_evidence")),
        time="0.000",
    )
    composite = compare.get("composite") or {}
    suite.append(
        _properties(
            [
                ("base", base),
                ("head", head),
                ("base_runs_counted", (compare.get("base") or {}).get("runs_counted")),
                ("head_runs_counted", (compare.get("head") or {}).get("runs_counted")),
                ("composite_base", _figure(composite.get("base"), 2)),
                ("composite_head", _figure(composite.get("head"), 2)),
                ("composite_delta", _figure(composite.get("delta"), 2)),
                ("min_effect", compare.get("min_effect")),
                ("regressed", str(bool(compare.get("regressed"))).lower()),
            ]
        )
    )
    for axis in AXES:
        if axis in axes:
            suite.append(_axis_case(axis, axes[axis], compare))
    return suite


def junit_document(suites: list[ET.Element], name: str) -> str:
    """The `<testsuites>` document, its totals summed from the suites, UTF-8 declared."""
    root = _element("testsuites", name=name)
    for attribute in ("tests", "failures", "errors"):
        root.set(attribute, str(sum(int(s.get(attribute) or 0) for s in suites)))
    root.set("time", _seconds(sum(float(s.get("time") or 0) for s in suites)))
    root.extend(suites)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'
