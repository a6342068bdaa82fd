"""`make demo`: the whole loop against a running collector, in 20 to 30 seconds.

It screens the demo agent (`badge-collector demo-agent`) with the example
suite twice: version 1.0.0 (the `baseline` variant), then version 1.1.0 (a
worse variant) behind the regression gate, after a few other agents'
synthetic traffic (`badge-collector demo`) for the leaderboard. Then it
prints where to look. Everything goes through the real commands, as a user
would type them, so the demo also shows how.

The collector is the one `make run` started: the same settings, read from
the same variables. The demo agents are stopped at the end, however it ends.

    BADGE_URL           the collector (default http://127.0.0.1:$BADGE_HTTP_PORT, port 4318)
    BADGE_DATABASE_URL  where `keys create` writes the keys (default: `make run`'s)
    DEMO_VARIANT        the worse variant screened as 1.1.0: broken (default), slower, flaky
    DEMO_ROUNDS         rounds per screening (3)
    DEMO_SETTLE         seconds `screen` waits for the agent's late spans (2)
    DEMO_SYNTHETIC      0 skips the synthetic traffic
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "examples" / "concierge.yaml"
AGENT = "concierge"
OWNER = "demo"
BADGE = [sys.executable, "-m", "collector"]
BASE, HEAD = "1.0.0", "1.1.0"
PORT = os.environ.get("BADGE_HTTP_PORT", "4318")
URL = os.environ.get("BADGE_URL", f"http://127.0.0.1:{PORT}").rstrip("/")
VARIANT = os.environ.get("DEMO_VARIANT", "broken")
ROUNDS = os.environ.get("DEMO_ROUNDS", "3")
SETTLE = os.environ.get("DEMO_SETTLE", "2")


def say(text: str = "") -> None:
    print(text, flush=True)


def badge(*args: str) -> str:
    """A `badge-collector` command whose stdout is the answer; its stderr is shown on failure."""
    done = subprocess.run([*BADGE, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"error: badge-collector {args[0]} {args[1]} failed:\n{done.stderr}")
    return done.stdout.strip()


@contextmanager
def demo_agent(variant: str, url: str, key: str) -> Iterator[str]:
    """A demo agent on a free port; yields its endpoint; stops it (SIGTERM flushes its spans)."""
    command = [*BADGE, "demo-agent", "--port", "0", "--variant", variant]
    command += ["--url", url, "--key", key]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()  # printed once it listens
            found = re.search(r"answering POST (\S+/run)", banner)
            if found is None:
                sys.exit(f"error: the demo agent ({variant}) did not start: {banner!r}")
            say(banner.strip())
            yield found.group(1)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            say(f"stopped the demo agent ({variant}, pid {process.pid})")


def screen(endpoint: str, version: str, screening_id: str, grader: str, *gate: str) -> int:
    """`badge-collector screen`, shown as a user would type it, its progress and table as they
    come."""
    command = ["screen", AGENT, "--suite", os.path.relpath(SUITE), "--endpoint", endpoint]
    command += ["--version", version, *gate, "--url", URL]
    extra = ["--screening-id", screening_id, "--settle", SETTLE, "--rounds", ROUNDS]
    say(f"\n$ badge-collector {' '.join(command)} --key $GRADER")
    return subprocess.run([*BADGE, *command, *extra, "--key", grader], check=False).returncode


def agent_id(http: httpx.Client, screening_id: str) -> str:
    """The id of the `concierge` that ran this screening (one per owner has the name)."""
    agents = http.get("/api/v1/agents", params={"all": "true", "page_size": 500}).json()
    for agent in agents["items"]:
        if agent["name"] == AGENT:
            ident = quote(agent["id"], safe="")
            if http.get(f"/api/v1/agents/{ident}/screenings/{screening_id}").status_code == 200:
                return str(agent["id"])
    sys.exit(f"error: no agent {AGENT!r} has screening {screening_id} at {URL}")


def answers(http: httpx.Client, url: str) -> bool:
    try:
        return http.get(url).status_code == 200
    except httpx.HTTPError:
        return False


def gate_compared(http: httpx.Client, ident: str, base_runs: int) -> str:
    """What the gate compared, beside the two screenings compared here: `screen
    --baseline` takes a version, every run of it so far (each `make demo`
    adds a screening of 1.0.0), so its p-values are not these once there are more."""
    versions = http.get(f"/api/v1/agents/{ident}/versions", params={"page_size": 500}).json()
    runs = next((v["total_runs"] for v in versions["items"] if v["version"] == BASE), 0)
    listed = http.get(f"/api/v1/agents/{ident}/screenings", params={"page_size": 500}).json()
    screenings = sum(1 for s in listed["items"] if s["version"] == BASE)
    if screenings <= 1:
        return f"(the gate above compared the same runs: version {BASE} has only this screening)"
    counted = min(runs, 100)  # a side is its latest 100 finished runs (docs/loop.md)
    return (
        f"(the gate above compared version {BASE} as a whole, {counted} of its {runs} runs "
        f"over {screenings} screenings, with the {HEAD} screening; here the baseline is this "
        f"demo's screening alone, {base_runs} runs, so the p-values differ)"
    )


def where_to_look(http: httpx.Client, base_id: str, head_id: str, owner_key: str) -> None:
    ident = quote(agent_id(http, head_id), safe="")
    agent = f"{URL}/agents/{ident}"
    sides = urlencode({"base_screening": base_id, "head_screening": head_id})
    compared = http.get(f"/api/v1/agents/{ident}/compare?{sides}").json()
    say(
        f"\nWhat the collector found, screening {base_id} ({BASE}, the baseline) against "
        f"screening {head_id} ({HEAD}, {VARIANT}):"
    )
    for axis, change in compared["axes"].items():
        say(f"  {axis:<16} {change['verdict']:<22} p adj. {change['p_adjusted']}")
    moved = [f"{t['task_id']} ({t['change']})" for t in compared["tasks"] if t["change"] != "same"]
    say(f"  tasks that changed: {', '.join(moved) or 'none'}")
    say(f"  {gate_compared(http, ident, compared['base']['runs_counted'])}")
    say("\nWhere to look:")
    say(f"  the leaderboard      {URL}/")
    say(f"  the agent            {agent}")
    for version, screening_id in ((BASE, base_id), (HEAD, head_id)):
        page = f"{agent}/screenings/{quote(screening_id, safe='')}"
        if answers(http, page):  # the dashboard's screening page, where this collector has one
            say(f"  screening of {version:<7} {page}")
    say(f"  the two compared     {agent}/compare?{sides}")
    failed = http.get(
        "/api/v1/runs",
        params={"agent_id": ident, "screening": head_id, "outcome": "failure", "page_size": 1},
    ).json()["items"]
    if failed:
        say(f"  a failed answer      {URL}/runs/{quote(failed[0]['id'], safe='')}")
    say(f"  (a run's trace and evidence ask for a key of owner {OWNER!r}: {owner_key})")
    say("In the terminal:")
    say(f"  .venv/bin/badge-collector compare {AGENT} --base {BASE} --head {HEAD} --url {URL}")
    say(f"  .venv/bin/badge-collector diagnose {AGENT} --version {HEAD} --url {URL}")
    say(f"  the API: {URL}/api/v1/agents/{ident}/compare?{sides}")
    say(f"  the CI gate: the second `badge-collector screen` above, `--baseline {BASE}`")
    say("    `--fail-on-regression`: exit 1 when an axis regressed")
    say(f"\nThe badge of {AGENT}, for a README (this collector draws it; docs/certificates.md):")
    say(f"  [![{AGENT}]({URL}/badge/{ident}.svg)]({agent})")
    say("Its score certificate, signed, checked by anyone:")
    certificate = f"{URL}/api/v1/agents/{ident}/certificate"
    say(f"  curl -s {certificate} | .venv/bin/badge-collector verify - --url {URL}")


def main() -> int:
    http = httpx.Client(base_url=URL, timeout=30)
    try:
        http.get("/healthz").raise_for_status()
    except httpx.HTTPError as exc:
        say(f"error: no collector at {URL} ({exc}); start one with `make run` in another terminal")
        return 2
    started = time.monotonic()
    grader = badge("keys", "create", "--owner", OWNER, "--role", "grader")
    agent_key = badge("keys", "create", "--owner", OWNER)
    say(f"created a grader key and an agent key for owner {OWNER!r}")
    if os.environ.get("DEMO_SYNTHETIC", "1") != "0":
        say(badge("demo", "--endpoint", URL, "--key", agent_key))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base_id, head_id = f"demo-{BASE}-{stamp}", f"demo-{HEAD}-{stamp}"
    with ExitStack() as agents:
        good = agents.enter_context(demo_agent("baseline", URL, agent_key))
        worse = agents.enter_context(demo_agent(VARIANT, URL, agent_key))
        if screen(good, BASE, base_id, grader) != 0:
            return 1
        gate = screen(worse, HEAD, head_id, grader, "--baseline", BASE, "--fail-on-regression")
    if gate == 2:
        return 1
    verdict = "would stop this release in CI" if gate == 1 else "would let this release through"
    say(f"\nThe gate (screen --baseline {BASE} --fail-on-regression) exited {gate}: it {verdict}.")
    where_to_look(http, base_id, head_id, agent_key)
    say(f"\n(make demo took {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
