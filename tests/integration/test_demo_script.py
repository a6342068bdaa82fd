"""`make demo`'s script end to end, against a collector the test starts.

The script is run as `make demo` runs it, in a child process, pointed at
this collector by the variables a user of `make run` would set: it must
create its keys in the collector's database, screen two versions through
two real demo agents, report the regression, print where to look, and
leave no demo agent running.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.harness import running_collector
from tests.integration.screening import API, runs_of

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"


def test_make_demo_screens_two_versions_reports_the_regression_and_stops_its_agents(
    tmp_path: Path,
) -> None:
    with running_collector(tmp_path) as c:
        env = {
            **os.environ,
            "BADGE_URL": c.http_url,
            "BADGE_DATABASE_URL": f"sqlite:///{c.db_path}",
            "DEMO_SETTLE": "0.5",
        }
        done = subprocess.run(
            [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout + done.stderr
        out = done.stdout
        assert re.search(r"correctness +regressed", out), out
        assert "tasks that changed: refund-eligible (broken), refund-window (broken)" in out
        assert "exited 1: it would stop this release in CI" in out
        assert f"{c.http_url}/agents/" in out and "compare?base_screening=demo-1.0.0-" in out
        stopped = re.findall(r"stopped the demo agent \((\w+), pid (\d+)\)", out)
        assert sorted(variant for variant, _ in stopped) == ["baseline", "broken"]
        for _, pid in stopped:
            assert not Path(f"/proc/{pid}").exists(), f"demo agent {pid} still running"
        screened = [r for r in runs_of(c, "concierge") if r["screening_id"]]
        assert len(screened) == 60 and {r["version"] for r in screened} == {"1.0.0", "1.1.0"}
        assert {r["success_source"] for r in screened} == {"graded"}
        assert sum(r["steps"] for r in screened) > 0  # the agents' own spans joined the runs
        board = c.http.get(f"{c.http_url}{API}/agents").json()["items"]
        assert {"concierge", "support-bot", "research-agent", "coder"} <= {a["name"] for a in board}
        concierge = next(a["id"] for a in board if a["name"] == "concierge")
        embed = (
            f"[![concierge]({c.http_url}/badge/{concierge}.svg)]({c.http_url}/agents/{concierge})"
        )
        assert embed in out
        readme = (SCRIPT.parents[1] / "README.md").read_text()[:3000]  # its first screen
        assert f"http://127.0.0.1:4318/badge/{concierge}.svg" in readme
        assert c.http.get(f"{c.http_url}/badge/{concierge}.svg").status_code == 200
        check = re.search(r"curl -s (\S+) \| \.venv/bin/badge-collector verify - --url (\S+)", out)
        assert check is not None, out
        certificate = c.http.get(check.group(1))
        verified = subprocess.run(
            [sys.executable, "-m", "collector", "verify", "-", "--url", check.group(2)],
            input=certificate.text,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "valid score certificate" in verified.stdout


def test_a_second_make_demo_says_its_gate_compared_the_whole_baseline_version(
    tmp_path: Path,
) -> None:
    """The gate (`screen --baseline 1.0.0`) compares every run of version 1.0.0,
    which a second `make demo` has screened twice; the summary compares this
    demo's two screenings. Same question, other runs, other p-values: the
    summary names each, and each says what the API says for it."""
    with running_collector(tmp_path) as c:
        env = {
            **os.environ,
            "BADGE_URL": c.http_url,
            "BADGE_DATABASE_URL": f"sqlite:///{c.db_path}",
            "DEMO_SETTLE": "0.5",
            "DEMO_SYNTHETIC": "0",
        }
        outputs = []
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=180
            )
            assert done.returncode == 0, done.stdout + done.stderr
            outputs.append(done.stdout)
        first, second = outputs
        assert "(the gate above compared the same runs: version 1.0.0 has only this screening)" in (
            first
        )
        assert (
            "(the gate above compared version 1.0.0 as a whole, 60 of its 60 runs over 2 "
            "screenings, with the 1.1.0 screening; here the baseline is this demo's screening "
            "alone, 30 runs, so the p-values differ)"
        ) in second
        base_id, head_id = re.findall(r"screening (demo-1\.[01]\.0-\w+) \(1\.", second)[:2]
        assert re.search(
            rf"found, screening {base_id} \(1\.0\.0, the baseline\) against screening "
            rf"{head_id} \(1\.1\.0, broken\)",
            second,
        )
        [(ident,)] = c.query("SELECT id FROM agents WHERE name = 'concierge'")
        compare = f"{c.http_url}{API}/agents/{ident}/compare"
        pair = c.http.get(compare, params={"base_screening": base_id, "head_screening": head_id})
        gate = c.http.get(compare, params={"base": "1.0.0", "head_screening": head_id})
        for axis, change in pair.json()["axes"].items():
            assert re.search(
                rf"{axis} +{change['verdict']} +p adj. {change['p_adjusted']}\n", second
            )
        for axis, change in gate.json()["axes"].items():  # the gate's own lines
            adjusted = f"{change['p_adjusted']:.4f}" if change["p_adjusted"] is not None else "-"
            assert re.search(
                rf"{axis} +[\d.]+ -> [\d.]+ +{change['verdict']} \(p adj. {adjusted}\)", second
            )
