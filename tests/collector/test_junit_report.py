"""The JUnit report of a screening and of a compare (issue 41), read back as CI reads it:
validated against the JUnit schema the common CI parsers accept (tests/fixtures/junit,
from Jenkins's junit-10.xsd) and parsed with junitparser, a JUnit reader of its own."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite

from collector.reports.facts import RoundFacts, TaskFacts
from collector.reports.junit import compare_suite, junit_document, screening_suite
from collector.reports.text import xml_text
from tests.collector.report_facts import HOSTILE, compared, schema, screening, task

SCHEMA = schema()


def read(document: str) -> dict[str, TestSuite]:
    """The report validated, then parsed by junitparser: its suites by name."""
    SCHEMA.validate(document)
    return {suite.name: suite for suite in JUnitXml.fromstring(document)}


def test_each_task_is_a_testcase_failed_errored_or_passed_by_its_rounds() -> None:
    facts = screening(
        task("greet", "passed", "passed", "passed"),
        task("refund", "failed", "passed", "failed", output="14 days"),
        task("track", "error:timeout", "error:timeout", "error:connection_error"),
        task("ship", "error:timeout", "failed", "passed"),
        task("lost", "missing", "missing", "missing"),
        exit_code=1,
        outcome="regressed against 1.0: correctness",
        compare=compared(correctness="regressed"),
    )
    suites = read(junit_document([screening_suite(facts)], "screen"))
    suite = suites["support-bot 2.0, suite core"]
    assert (suite.tests, suite.failures, suite.errors) == (5, 2, 2)
    assert suite.time == 12.25 and suite.timestamp == "2026-01-02T03:04:05"
    cases = {case.name: case for case in suite}
    assert {case.classname for case in suite} == {"core"}
    assert cases["greet"].is_passed and cases["greet"].time == 1.25  # median latency, s
    [refund] = cases["refund"].result
    assert isinstance(refund, Failure) and refund.message == "2 of 3 rounds failed (wrong_answer 2)"
    assert refund.type == "wrong_answer"
    assert refund.text.startswith("grader: contains\nexpected:\nright\n\nround 1: wrong_answer")
    assert refund.text.count("  output:\n14 days") == 2 and "round 2" not in refund.text
    [track] = cases["track"].result  # no answer in any round: the agent is down, not wrong
    assert isinstance(track, Error) and not cases["track"].is_failure
    assert track.message == "3 of 3 rounds failed (timeout 2, connection_error 1)"
    assert "why: timeout happened" in track.text
    [ship] = cases["ship"].result  # one timeout, one wrong answer: a failure
    assert isinstance(ship, Failure)
    assert ship.message == "2 of 3 rounds failed (timeout 1, wrong_answer 1)"
    [lost] = cases["lost"].result
    assert isinstance(lost, Error) and "round 1: no run of it is in the collector" in lost.text


def test_the_properties_carry_pass_k_the_run_ids_the_screening_and_its_certificate() -> None:
    facts = screening(task("greet", "passed", "failed"), task("lost", "passed", "missing"))
    root = ET.fromstring(junit_document([screening_suite(facts)], "screen"))
    properties = [(p.get("name"), p.get("value")) for p in root.iter("property")]
    values = dict(properties)
    assert values["screening_id"] == "s-1" and values["agent_id"] == "agent-1"
    assert (values["pass_1"], values["pass_3"], values["pass_5"]) == ("0.800", "0.700", "0.000")
    assert values["composite"] == "81.50" and values["verified_state"] == "verified"
    runs = [(name, value) for name, value in properties if str(name).startswith("run:")]
    assert runs == [
        ("run:greet/1", "greet-1"),
        ("run:greet/2", "greet-2"),
        ("run:lost/1", "lost-1"),  # round 2 has no run: no property
    ]


def test_an_agents_answer_is_carried_whatever_characters_it_holds() -> None:
    facts = screening(task("refund", "failed", output=HOSTILE, expected="<b>&</b>"))
    document = junit_document([screening_suite(facts)], "screen")
    [refund] = next(iter(read(document).values()))
    [failure] = refund.result
    # XML 1.0 cannot hold NUL, ESC, form feed, a lone surrogate or U+FFFE: shown escaped
    assert "A\\x00B\\x1b[31mred\\x0c\\ud800\\ufffe ]]> </failure> <script>" in failure.text
    assert "expected:\n<b>&</b>\n" in failure.text  # markup as text, not as elements
    assert [e.tag for e in ET.fromstring(document).iter("failure")] == ["failure"]


def test_a_compare_fails_a_regressed_axis_and_skips_one_without_evidence() -> None:
    facts = compared(correctness="regressed", robustness="insufficient_evidence")
    suites = read(junit_document([compare_suite(facts)], "compare"))
    suite = suites["compare support-bot 1.0 -> 2.0"]
    assert (suite.tests, suite.failures, suite.errors) == (5, 1, 0)
    cases = {case.name: case for case in suite}
    assert list(cases) == ["correctness", "latency", "cost", "tool_efficiency", "robustness"]
    [regressed] = cases["correctness"].result
    assert isinstance(regressed, Failure) and regressed.type == "regressed"
    assert regressed.message == (
        "regressed: 100.00 -> 80.00 (-20.00), CMH (paired) over 10 tasks, "
        "p 0.001565, p adj. 0.007827"
    )
    assert "base 100.00, head 80.00" in regressed.text
    assert "task refund: broken (3/3 -> 0/3)" in regressed.text and "greet" not in regressed.text
    [skipped] = cases["robustness"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "insufficient evidence: 5 paired tasks with 2 runs each"
    assert cases["latency"].is_passed


def test_a_screening_with_its_gate_is_two_suites_whose_totals_the_root_sums() -> None:
    facts = screening(
        task("refund", "failed"), task("track", "error:timeout"), compare=compared(cost="regressed")
    )
    suites = [screening_suite(facts), compare_suite(compared(cost="regressed"))]
    document = junit_document(suites, "screen")
    read(document)
    root = ET.fromstring(document)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("7", "2", "1")


def _case(output: str, task_id: str, agent: str, detail: str) -> TaskFacts:
    rounds = (
        RoundFacts(1, "failed", "none", output, None, "r1", 5.0),
        RoundFacts(2, "error", "http_error", output, detail, "r2", 5.0),
    )
    return TaskFacts(task_id, "exact", output, rounds, 5.0)


@settings(max_examples=60, deadline=None)
@given(
    output=st.text(max_size=300),
    task_id=st.text(min_size=1, max_size=40),
    agent=st.text(min_size=1, max_size=40),
    detail=st.text(max_size=80),
)
def test_any_text_leaves_the_report_valid_and_readable(
    output: str, task_id: str, agent: str, detail: str
) -> None:
    facts = screening(_case(output, task_id, agent, detail), agent=agent, version=None)
    suites = read(junit_document([screening_suite(facts)], "screen"))
    [suite] = suites.values()
    [case] = suite
    [failure] = case.result
    assert xml_text(output) in failure.text.replace("\r\n", "\n") or "\r" in output
    assert case.name == xml_text(task_id) or "\r" in task_id


def test_a_command_that_failed_for_no_task_adds_an_error_saying_why() -> None:
    lost = screening(
        task("greet", "passed"),
        exit_code=2,
        outcome="none of the 1 runs dispatched reached the collector",
        document=None,
        notes=("1 of the 1 runs dispatched now are not in the collector",),
    )
    [suite] = read(junit_document([screening_suite(lost)], "screen")).values()
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 1)
    case = next(c for c in suite if c.name == "screening")
    [error] = case.result
    assert isinstance(error, Error) and error.type == "exit_2"
    assert error.message == "none of the 1 runs dispatched reached the collector"
    assert "1 of the 1 runs dispatched now" in error.text
    uncompared = screening(task("greet", "passed"), exit_code=1, outcome="not compared with 1.0")
    [suite] = read(junit_document([screening_suite(uncompared)], "screen")).values()
    assert [c.name for c in suite] == ["greet", "screening"]
    regressed = screening(task("greet", "passed"), exit_code=1, compare=compared(cost="regressed"))
    [suite] = read(junit_document([screening_suite(regressed)], "screen")).values()
    assert [c.name for c in suite] == ["greet"]  # the compare's suite says why
