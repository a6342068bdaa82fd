"""The CI examples (examples/ci/, docs/ci.md) run as written: a real collector started
by their commands, the demo agent, two screenings, the gate, the reports, the certificate.

The GitHub Actions workflow's `run:` steps and the GitLab job's `script` are taken
from the files and run as their CI systems run them (tests/integration/ci_runners.py),
with only what a runner decides changed: free ports instead of the fixed ones (other
tests run beside this one), a shorter --settle, the workspace a temporary folder with
the repository's examples in it. The install step is skipped (this test runs from
the installed package: `badge-collector` is on PATH) and the actions (`uses:`) are
checked by reading them. With the `broken` candidate the gate closes (exit 1) and
every report is still there; GitLab's job is run with the candidate unchanged, and
passes.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import xmlschema
import yaml
from junitparser import Failure, JUnitXml

from collector.cli import main
from tests.integration.ci_runners import Ran, github_steps, gitlab_script, stop

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "ci"
XSD = REPO / "tests" / "fixtures" / "junit" / "junit.xsd"
BROKEN = ("refund-eligible", "refund-window")  # what `broken` gets wrong (examples/README.md)


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now (bound, then released for the CI commands to take)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def ports_for(variables: dict[str, Any]) -> dict[str, str]:
    """The file's ports and collector address, each replaced by a free port."""
    http, grpc, baseline, candidate = free_ports(4)
    changed = {
        "BADGE_HTTP_PORT": str(http),
        "BADGE_GRPC_PORT": str(grpc),
        "BADGE_URL": f"http://127.0.0.1:{http}",
        "BASELINE_PORT": str(baseline),
        "CANDIDATE_PORT": str(candidate),
        "SETTLE": "0.5",
    }
    assert set(changed) <= set(variables), "the test changes only what the file sets"
    return changed


@contextmanager
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A checkout as CI has it, for what the examples read (the suite)."""
    root = tmp_path / "checkout"
    root.mkdir()
    (root / "examples").symlink_to(REPO / "examples")
    yield root


def runner_env(tmp_path: Path) -> dict[str, str]:
    """The machine's environment as a runner's shell has it, `badge-collector` on PATH,
    and none of the BADGE_ settings of whoever runs the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BADGE_", "GITHUB_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CI"] = "true"
    env["HOME"] = str(tmp_path / "home")
    return env


def check_junit(path: Path) -> dict[str, Any]:
    """The JUnit report as CI reads it: valid, and its suites by name."""
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    return {suite.name: suite for suite in JUnitXml.fromfile(str(path))}


def failed_cases(suite: Any) -> dict[str, Failure]:
    return {case.name: case.result[0] for case in suite if case.result}


def verify_offline(certificate: Path, jwks: Path) -> None:
    """The kept artifacts check without the collector: a stranger's check, later."""
    assert main(["verify", str(certificate), "--keys", str(jwks)]) == 0


def test_the_github_workflow_gates_a_broken_candidate_and_keeps_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    [job] = workflow["jobs"].values()
    job["env"].update({**ports_for(job["env"]), "CANDIDATE_VARIANT": "broken"})
    with workspace(tmp_path) as root:
        env = {
            **runner_env(tmp_path),
            "RUNNER_TEMP": str(tmp_path / "runner-temp"),
            "GITHUB_WORKSPACE": str(root),
            "GITHUB_SHA": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c",
        }
        (tmp_path / "runner-temp").mkdir()
        ran = Ran()
        try:
            ran = github_steps(job, env, root, skip={"install"})
        finally:
            stop(ran)
        codes = {step.name: step.code for step in ran.steps}
        logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in ran.steps)
        assert codes == {
            "Start the collector": 0,
            "Start the agents": 0,
            "Screen the baseline": 0,
            "Screen the candidate behind the gate": 1,  # the gate closed
            "Verify the certificate": 0,  # run although the gate failed (`!cancelled()`)
        }, logs
        reports = root / job["env"]["REPORTS"]
        suites = check_junit(reports / "junit.xml")
        [screening] = [s for name, s in suites.items() if name.startswith("concierge 0f1e2d3")]
        assert set(failed_cases(screening)) == set(BROKEN)
        compare = suites["compare concierge main -> 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"]
        assert set(failed_cases(compare)) == {"correctness"}
        summary = ran.step("Screen the candidate behind the gate").summary
        assert summary.startswith("## ❌ concierge 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c: ")
        assert "regressed against main: correctness" in summary
        assert summary.count("<details>") == 2 and "within 30 days" in summary
        digest = next(
            p.value for p in screening.properties() if p.name.endswith("statement_digest")
        )
        assert f"statement digest `{digest}`" in summary
        baseline = ran.step("Screen the baseline").summary  # the step summary by default
        assert baseline.startswith("## ✅ concierge main: screened: 10 of 10 tasks passed")
        verify_offline(reports / "certificate.json", reports / "jwks.json")
    for uses in ("actions/upload-artifact", "mikepenz/action-junit-report"):
        [step] = [s for s in job["steps"] if str(s.get("uses", "")).startswith(uses)]
        assert step["if"] == "${{ !cancelled() }}"  # kept and published when the gate fails
        paths = str(step["with"].get("path") or step["with"].get("report_paths"))
        assert paths.startswith(job["env"]["REPORTS"])
    capsys.readouterr()


def test_the_gitlab_job_passes_an_unchanged_candidate_and_keeps_its_artifacts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    [job] = document.values()
    job["variables"].update(ports_for(job["variables"]))
    assert job["before_script"] == ["python -m pip install ."]  # the one step not run here
    with workspace(tmp_path) as root:
        env = {
            **runner_env(tmp_path),
            "CI_COMMIT_SHORT_SHA": "0f1e2d3c",
            "CI_PROJECT_DIR": str(root),
        }
        ran = Ran()
        try:
            ran = gitlab_script(job, env, root)
        finally:
            stop(ran)
        [script] = ran.steps
        assert script.code == 0, script.log
        reports = root / job["variables"]["REPORTS"]
        suites = check_junit(reports / "junit.xml")
        assert all(not failed_cases(suite) for suite in suites.values())
        summary = (reports / "summary.md").read_text()
        assert summary.startswith("## ✅ concierge 0f1e2d3c: no regression against main")
        verify_offline(reports / "certificate.json", reports / "jwks.json")
        artifacts = job["artifacts"]
        assert artifacts["when"] == "always" and artifacts["paths"] == [f"{reports.name}/"]
        assert artifacts["reports"]["junit"] == f"{reports.name}/junit.xml"
        shutil.rmtree(root / job["variables"]["BADGE_DIR"])
    capsys.readouterr()
