"""docs/certificates.md's "by hand" verification, run as a reader would run it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.certificates import agent_id_of, send_run
from tests.integration.harness import running_collector

DOC = Path(__file__).resolve().parents[2] / "docs" / "certificates.md"


def test_the_documented_python_verifies_a_score_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_collector(tmp_path) as collector:
        send_run(collector, service="documented")
        collector.settle()
        agent = agent_id_of(collector, "documented")
        run_documented(collector.http_url, agent)
    assert capsys.readouterr().out.startswith(f"agent:{agent} ")


def run_documented(url: str, agent: str) -> None:
    text = DOC.read_text().split("## Verifying by hand", 1)[1]
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    source = code.group(1)
    source = source.replace("http://127.0.0.1:4318", url)
    source = source.replace("e55d8ff8-ceb1-5ebc-8ba7-71b9a7b2c1d0", agent)
    exec(compile(source, str(DOC), "exec"), {})
