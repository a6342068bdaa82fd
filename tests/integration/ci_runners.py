"""Run a CI file's commands as its CI system would, on this machine (issue 41).

`github_steps` runs every `run:` step of a GitHub Actions job the way a runner
does: each step in its own `bash --noprofile --norc -eo pipefail`, with the
job's and the step's `env`, what earlier steps appended to `$GITHUB_ENV`, a
`$GITHUB_STEP_SUMMARY` file of its own, and the step skipped after a failure
unless its `if:` says `!cancelled()` or `always()`. `gitlab_script` runs a
GitLab job's `script` lines as the runner does: one bash, `-eo pipefail`,
the job's `variables` exported. Background processes a step starts go on
after it, as on a runner; `stop` ends them (each step leads a process group
of its own, which its children stay in). Actions (`uses:`) cannot run here:
the caller names them, and the steps it skips, and the test checks them by
reading the file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEP_TIMEOUT_S = 300.0  # a step that screens a suite twice on a loaded machine
ALWAYS = ("${{ !cancelled() }}", "${{ always() }}", "always()", "!cancelled()")


@dataclass
class Step:
    name: str
    code: int | None  # None: skipped
    summary: str = ""
    log: str = ""


@dataclass
class Ran:
    """What a CI file's commands did; `groups` are the process groups to stop."""

    steps: list[Step] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)

    def step(self, name: str) -> Step:
        [found] = [s for s in self.steps if s.name == name]
        return found


def _env_file(path: Path) -> dict[str, str]:
    """`NAME=value` lines a step appended to $GITHUB_ENV (the multi-line form is refused)."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line:
            continue
        name, sep, value = line.partition("=")
        assert sep and "<<" not in name, f"not a NAME=value line in GITHUB_ENV: {line!r}"
        values[name] = value
    return values


def _bash(script: str, env: Mapping[str, str], cwd: Path, log: Path, ran: Ran) -> tuple[int, str]:
    """One shell, leading a process group of its own; its exit code and output."""
    path = log.with_suffix(".sh")
    path.write_text(script)
    with log.open("w") as out:
        process = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        ran.groups.append(process.pid)
        code = process.wait(STEP_TIMEOUT_S)
    return code, log.read_text()


def github_steps(
    job: Mapping[str, Any], base_env: Mapping[str, str], workspace: Path, skip: set[str]
) -> Ran:
    """Every `run:` step of `job` but those whose id is in `skip`."""
    ran = Ran()
    state = workspace / ".runner"
    state.mkdir()
    github_env = state / "github_env"
    github_env.touch()
    failed = False
    for number, step in enumerate(job["steps"]):
        name = str(step.get("name") or step.get("uses") or number)
        if "run" not in step or step.get("id") in skip:
            continue
        condition = step.get("if")
        assert condition in (None, *ALWAYS), f"step {name!r}: `if: {condition}` not emulated"
        if failed and condition is None:
            ran.steps.append(Step(name, None))
            continue
        assert "${{" not in step["run"], f"step {name!r}: an expression in a script"
        summary = state / f"summary-{number}.md"
        summary.touch()
        env = {
            **base_env,
            **{k: str(v) for k, v in (job.get("env") or {}).items()},
            **{k: str(v) for k, v in (step.get("env") or {}).items()},
            **_env_file(github_env),
            "GITHUB_ENV": str(github_env),
            "GITHUB_STEP_SUMMARY": str(summary),
        }
        code, log = _bash(step["run"], env, workspace, state / f"step-{number}.log", ran)
        ran.steps.append(Step(name, code, summary.read_text(), log))
        failed = failed or code != 0
    return ran


def gitlab_script(job: Mapping[str, Any], base_env: Mapping[str, str], workspace: Path) -> Ran:
    """The job's `script`, one shell, as GitLab's runner runs it (`before_script` is the
    caller's to check: it installs)."""
    ran = Ran()
    state = workspace / ".runner"
    state.mkdir()
    env = {**base_env, **{k: str(v) for k, v in (job.get("variables") or {}).items()}}
    script = "\n".join(str(line) for line in job["script"]) + "\n"
    code, log = _bash(script, env, workspace, state / "script.log", ran)
    ran.steps.append(Step("script", code, "", log))
    return ran


def stop(ran: Ran, timeout_s: float = 30.0) -> None:
    """End what the steps left running (the collector, the agents), group by group."""
    for group in ran.groups:
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + timeout_s
    for group in ran.groups:
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
