"""`screen` and `compare` write their reports for CI (issue 41): JUnit, Markdown, the
step summary of a GitHub Actions step, the screening's certificate. Against a real
collector and a real instrumented agent; the reports are read back as CI reads them
(the JUnit schema and junitparser) and the certificate checked with `verify`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml

from bench.support.otlp import agent_run
from collector.cli import main
from tests.integration.harness import Collector, running_collector
from tests.integration.screening import write_suite
from tests.screening_agent import agent_app, serving

XSD = Path(__file__).resolve().parents[1] / "fixtures" / "junit" / "junit.xsd"
# What the worse version answers to t0: markup, control characters, 5,000 characters.
MARKUP = "```\n</details> ]]> <b>bold</b> \x1b[31m\x0c"
HOSTILE = MARKUP + "x" * 5000


@dataclass
class Said:
    code: int
    out: str
    err: str


def badge(*argv: str, env: dict[str, str] | None = None) -> Said:
    """`badge-collector ...` in this process, its output captured; `env` set meanwhile."""
    out, err = io.StringIO(), io.StringIO()
    saved = {name: os.environ.get(name) for name in (env or {})}
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return Said(code, out.getvalue(), err.getvalue())


def tasks(answers: list[str]) -> list[dict[str, Any]]:
    """Six tasks (a paired compare needs five), each expecting `done`."""
    return [
        {"id": f"t{i}", "prompt": f"task {i}", "expected_output": "done",
         "metadata": {"answer": answer}}
        for i, answer in enumerate(answers)
    ]  # fmt: skip


def junit(text: str) -> dict[str, Any]:
    xmlschema.XMLSchema(str(XSD)).validate(text)
    return {suite.name: suite for suite in JUnitXml.fromstring(text)}


@dataclass
class Gated:
    """Two screenings of one agent: 1.0 (good), then 2.0 (worse) behind the gate."""

    c: Collector
    reports: Path
    summary: Path
    summary_after_base: str
    base: Said
    head: Said


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gated]:
    tmp = tmp_path_factory.mktemp("gated")
    with running_collector(tmp) as c:
        grader = c.service.keys.create("owner-a", "grader")
        good = write_suite(tmp, tasks(["done"] * 6), name="gate", rounds=3)
        (tmp / "worse").mkdir()
        bad = write_suite(tmp / "worse", tasks([HOSTILE] + ["no idea"] * 5), name="gate", rounds=3)
        app, _ = agent_app(c.http_url, c.key, service="gate-bot")
        summary = tmp / "step-summary.md"
        summary.write_text("an earlier step's summary\n")
        reports = tmp / "out" / "reports"  # its folders do not exist yet
        github = {"GITHUB_STEP_SUMMARY": str(summary)}
        with serving(app) as url:
            common = ("screen", "gate-bot", "--endpoint", f"{url}/run", "--url", c.http_url)
            common += ("--key", grader, "--settle", "0.2", "--concurrency", "6")
            base = badge(*common, "--suite", str(good), "--version", "1.0", "--junit", "-",
                         env=github)  # fmt: skip
            after_base = summary.read_text()
            head = badge(
                *common, "--suite", str(bad), "--version", "2.0", "--screening-id", "head-1",
                "--baseline", "1.0", "--fail-on-regression",
                "--junit", str(reports / "junit.xml"), "--markdown", str(reports / "summary.md"),
                "--certificate", str(reports / "certificate.json"),
                env=github,
            )  # fmt: skip
        yield Gated(c, reports, summary, after_base, base, head)


def test_junit_on_stdout_leaves_the_table_to_stderr_and_the_step_summary_is_appended_to(
    gated: Gated,
) -> None:
    assert gated.base.code == 0, gated.base.err
    [suite] = junit(gated.base.out).values()  # stdout is the report and nothing else
    assert suite.name == "gate-bot 1.0, suite gate" and suite.tests == 6 and not suite.failures
    assert "composite" in gated.base.err and "t0" in gated.base.err  # the table
    earlier, _, added = gated.summary_after_base.partition("## ✅ gate-bot 1.0: screened")
    assert earlier == "an earlier step's summary\n" and "6 of 6 tasks passed" in added
    # the second screening was given --markdown: the step summary was left alone
    assert gated.summary.read_text() == gated.summary_after_base


def test_a_closed_gate_exits_1_and_its_junit_shows_the_failed_tasks_and_the_axis(
    gated: Gated,
) -> None:
    assert gated.head.code == 1, gated.head.err
    assert "REGRESSED" in gated.head.out  # the table and the verdict on stdout as before
    suites = junit((gated.reports / "junit.xml").read_text())
    screening = suites["gate-bot 2.0, suite gate"]
    assert (screening.tests, screening.failures, screening.errors) == (6, 6, 0)
    cases = {case.name: case for case in screening}
    [t1] = cases["t1"].result
    assert isinstance(t1, Failure) and t1.message == "3 of 3 rounds failed (wrong_answer 3)"
    assert t1.text.startswith("grader: fuzzy\nexpected:\ndone\n\nround 1: wrong_answer (run ")
    assert "  output:\nno idea" in t1.text
    [t0] = cases["t0"].result  # what the agent said, escaped and cut to 2,000 characters
    output = t0.text.split("  output:\n", 1)[1].split("\n\nround 2")[0]
    assert output.startswith("```\n</details> ]]> <b>bold</b> \\x1b[31m\\x0c")
    kept = "x" * (2000 - len(MARKUP))  # 2,000 characters of the answer, then the cut
    assert output.endswith(f"{kept}\n[cut at 2,000 of {len(HOSTILE):,} characters]")
    assert kept + "x" not in output
    properties = {p.name: p.value for p in screening.properties()}
    assert properties["screening_id"] == "head-1" and properties["exit_code"] == "1"
    assert properties["pass_1"] == "0.000" and properties["verified_state"] == "verified"
    runs = {name: value for name, value in properties.items() if name.startswith("run:")}
    assert len(runs) == 18 and "run:t3/2" in runs
    compare = suites["compare gate-bot 1.0 -> 2.0"]
    verdicts = {case.name: case.result for case in compare}
    [regressed] = verdicts["correctness"]
    assert isinstance(regressed, Failure) and regressed.message.startswith("regressed: 100.00 ->")
    assert (
        "p adjusted (Holm)" in regressed.text and "task t0: broken (3/3 -> 0/3)" in regressed.text
    )


def test_the_certificate_is_written_verifies_and_the_reports_name_its_digest(
    gated: Gated,
) -> None:
    path = gated.reports / "certificate.json"
    envelope = json.loads(path.read_bytes())
    digest = hashlib.sha256(base64.b64decode(envelope["payload"])).hexdigest()
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["subject"][0]["name"] == "screening:head-1"
    assert f"statement digest {digest}" in gated.head.err
    checked = badge("verify", str(path), "--url", gated.c.http_url)
    assert checked.code == 0, checked.out + checked.err
    assert "valid screening certificate: screening:head-1" in checked.out
    root = ET.fromstring((gated.reports / "junit.xml").read_text())
    named = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert named["certificate_statement_digest"] == digest
    markdown = (gated.reports / "summary.md").read_text()
    assert f"statement digest `{digest}`" in markdown
    assert f"badge-collector verify {path} --url {gated.c.http_url}" in markdown


def test_the_markdown_leads_with_the_verdict_and_links_the_dashboard(gated: Gated) -> None:
    markdown = (gated.reports / "summary.md").read_text()
    first = markdown.splitlines()[0]
    verdict = r"## ❌ gate-bot 2\.0: regressed against 1\.0: correctness \(p adj\. [\d.]+\)"
    assert re.fullmatch(verdict, first), first
    assert "### 6 of 6 tasks failed" in markdown and markdown.count("<details>") == 6
    assert "````text\n```\n</details>" in markdown  # a longer fence than the answer's own
    pages = re.findall(rf"\]\(({re.escape(gated.c.http_url)}/[^)]+)\)", markdown)
    assert any("/screenings/head-1" in page for page in pages)
    assert any("/compare?base=1.0&head_screening=head-1" in page for page in pages)
    for page in pages:  # every link opens a page of the dashboard
        assert gated.c.http.get(page).status_code == 200, page


def test_compare_writes_its_reports_and_junit_on_stdout_is_all_stdout_says(
    gated: Gated, tmp_path: Path
) -> None:
    url = gated.c.http_url
    said = badge(
        "compare", "gate-bot", "--base", "1.0", "--head", "2.0", "--url", url,
        "--fail-on-regression", "--junit", "-", "--markdown", str(tmp_path / "compare.md"),
    )  # fmt: skip
    assert said.code == 1, said.err
    [suite] = junit(said.out).values()
    assert suite.name == "compare gate-bot 1.0 -> 2.0" and suite.failures == 1
    assert "REGRESSED" in said.err  # the table, out of the report's way
    markdown = (tmp_path / "compare.md").read_text()
    assert markdown.startswith("## ❌ gate-bot 1.0 → 2.0: regressed")
    assert f"]({url}/agents/" in markdown and "compare?base=1.0&head=2.0" in markdown


def test_reports_are_written_when_no_run_reaches_the_collector(tmp_path: Path) -> None:
    with running_collector(tmp_path, max_agents_per_owner=1) as c:
        assert c.post(agent_run(service="first-agent").SerializeToString()).status_code == 200
        suite = write_suite(tmp_path, tasks(["done", "no idea"]), name="lost", rounds=1)
        said = badge(
            "screen", "second-agent", "--suite", str(suite), "--url", c.http_url,
            "--target", "tests.screening_agent:answer", "--key", c.key, "--settle", "0",
            "--junit", str(tmp_path / "junit.xml"), "--markdown", str(tmp_path / "summary.md"),
        )  # fmt: skip
    assert said.code == 2, said.err
    suites = junit((tmp_path / "junit.xml").read_text())
    [suite] = suites.values()
    cases = {case.name: case for case in suite}
    [why] = cases["screening"].result
    assert isinstance(why, Error) and why.message == (
        "none of the 2 runs dispatched reached the collector"
    )
    [wrong] = cases["t1"].result  # what the screener saw is reported all the same
    assert isinstance(wrong, Failure) and "output:\nno idea" in wrong.text
    markdown = (tmp_path / "summary.md").read_text()
    assert markdown.startswith("## ⚠️ second-agent: none of the 2 runs dispatched reached")
    assert "what follows is what the screener saw" in markdown


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--json", "--junit", "-"], "--json and --junit - would both print to stdout"),
        (["--junit", "-", "--markdown", "-"], "--junit - and --markdown - would both print"),
        (["--certificate", "-"], "--certificate needs a file"),
        (["--junit", "{tmp}"], "is a folder, not a file"),
        (["--markdown", "{tmp}/file/x.md"], "cannot make its folder"),
    ],
)
def test_report_flags_that_cannot_be_honoured_stop_the_command_before_it_screens(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    (tmp_path / "file").write_text("a file where a folder would go")
    suite = write_suite(tmp_path, tasks(["done"]), name="never")
    argv = [flag.format(tmp=tmp_path) for flag in flags]
    # no collector listens at this address: a usage error is found before it is asked
    done = badge("screen", "bot", "--suite", str(suite), "--url", "http://127.0.0.1:9",
                 "--endpoint", "http://127.0.0.1:9/run", *argv)  # fmt: skip
    assert done.code == 2 and said in done.err, done.err
    assert "unreachable" not in done.err


def test_an_axis_without_evidence_is_skipped_with_what_it_lacks(tmp_path: Path) -> None:
    with running_collector(tmp_path) as c:
        grader = c.service.keys.create("owner-a", "grader")
        suite = write_suite(tmp_path, tasks(["done", "done"]), name="small", rounds=1)
        common = ("screen", "small-bot", "--suite", str(suite), "--url", c.http_url)
        common += ("--target", "tests.screening_agent:answer", "--key", grader, "--settle", "0")
        assert badge(*common, "--version", "1.0").code == 0
        said = badge(*common, "--version", "1.1", "--baseline", "1.0", "--junit", "-")
    assert said.code == 0, said.err
    compare = junit(said.out)["compare small-bot 1.0 -> 1.1"]
    skipped = {case.name: case.result[0] for case in compare if case.is_skipped}
    assert "correctness" in skipped  # two tasks, one round: too few to test anything
    assert skipped["correctness"].message.startswith("insufficient evidence: ")
    assert len(skipped["correctness"].message) > len("insufficient evidence: ") + 10
