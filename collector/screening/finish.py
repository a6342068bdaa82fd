"""After the last dispatch: wait for the runs, print the screening, decide the exit code.

The collector says what it stored: the document of
`GET /agents/{id}/screenings/{screening_id}` has `complete` (every planned
dispatch has its run) when the plan was recorded. An incomplete screening
exits 2, with the command that dispatches what is missing, so that a CI job
never takes a screening that lost runs for a finished one (issue 37 item 5).
So does a certificate that was asked for and could not be kept: the job
would otherwise keep no signed record of what it gated on (issue 41).

Whichever way it ends, the reports asked for (`--junit`, `--markdown`, the
step summary of a GitHub Actions step) are written from what was learnt by
then (collector.screening.reporting): a failing CI job needs them most.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from collector.api_client import ApiClient, segment
from collector.reports.facts import CompareFacts
from collector.screening.certificate import save_certificate
from collector.screening.document import fetch_document, wait_for_runs
from collector.screening.options import Options
from collector.screening.plan import Screening
from collector.screening.report import Verdict, compare, print_table, stored_of_planned
from collector.screening.reporting import Gathered, public_url, write_reports

RUNS_WAIT_S = 10.0  # after --settle: how long to wait for runs still being assembled


def finish(
    client: ApiClient,
    screening: Screening,
    options: Options,
    gathered: Gathered,
    say: Callable[[str], None],
) -> int:
    """0 done; 1 the gate closed; 2 the screening is incomplete (or cannot be read), or its
    certificate or a report asked for could not be written."""
    try:
        code = _conclude(client, screening, options, gathered, say)
    finally:  # whatever was learnt, even when concluding failed
        written = write_reports(screening, options, gathered, say)
    return code if written else 2


def _conclude(
    client: ApiClient,
    screening: Screening,
    options: Options,
    gathered: Gathered,
    say: Callable[[str], None],
) -> int:
    sid = screening.screening_id
    outcomes = gathered.outcomes
    time.sleep(options.settle)  # the agent's own late spans (SCREEN.md section 4)
    found_id, runs = wait_for_runs(
        client, options.agent, gathered.agent_id, sid, outcomes, RUNS_WAIT_S
    )
    gathered.agent_id, gathered.runs = found_id, runs
    if found_id is None:
        say(f"error: none of the {len(outcomes)} runs of this screening is in the collector")
        return gathered.conclude(
            2, f"none of the {len(outcomes)} runs dispatched reached the collector"
        )
    if len(runs) < len(outcomes):
        _note(
            gathered,
            say,
            f"{len(outcomes) - len(runs)} of the {len(outcomes)} runs dispatched now are not "
            "in the collector",
        )
    if any(run["success_source"] == "reported" for run in runs.values()):
        _note(
            gathered,
            say,
            "the key is an agent key: outcomes are reported, not graded, and this screening "
            "will not count as verified (use a grader key: keys create --role grader)",
        )
    reply = fetch_document(client, found_id, sid)
    if not reply.ok:
        say(f"error: cannot read screening {sid!r}: {reply.detail()}")
        return gathered.conclude(
            2, f"the collector's screening could not be read: {reply.detail()}"
        )
    document: dict[str, Any] = reply.body
    gathered.document = document
    gathered.verified_state = _verified_state(client, found_id, sid)
    table = sys.stderr if options.reports_take_stdout else sys.stdout
    if options.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print_table(document, outcomes, table)
    problems: list[str] = []  # each one exits 2
    incomplete = _incomplete(document, len(runs), len(outcomes), sid, say)
    if incomplete is not None:
        problems.append(incomplete)
    if options.certificate is not None:
        problem = _certify(client, options, gathered, sid, say)
        if problem is not None:
            problems.append(problem)
    gate, finding = 0, _screened(document)
    if options.baseline is not None:
        gate, finding = _gate(client, options, gathered, sid, sys.stderr if options.json else table)
    return gathered.conclude(2 if problems else gate, "; ".join([finding, *problems]))


def _certify(
    client: ApiClient, options: Options, gathered: Gathered, sid: str, say: Callable[[str], None]
) -> str | None:
    """`--certificate FILE` written, or why not (CERTS.md section 3)."""
    assert options.certificate is not None and gathered.agent_id is not None
    verify_url = public_url(options) or client.url
    saved = save_certificate(client, gathered.agent_id, sid, options.certificate, verify_url)
    if isinstance(saved, str):
        say(f"error: {saved}")
        return f"no certificate: {saved}"
    gathered.certificate = saved
    say(f"certificate written to {saved.path} (statement digest {saved.statement_digest})")
    return None


def _gate(
    client: ApiClient, options: Options, gathered: Gathered, sid: str, out: TextIO
) -> tuple[int, str]:
    """The baseline compared with this screening: the gate's exit code and its finding."""
    assert options.baseline is not None and gathered.agent_id is not None
    verdict = compare(client, gathered.agent_id, options.baseline, sid)
    for line in verdict.lines:
        print(line, file=out)
    if verdict.body is not None:
        asked = {"base": options.baseline, "head_screening": sid}
        gathered.compare = CompareFacts(verdict.body, options.agent, gathered.agent_id, asked)
    # regressed, or could not be compared: a gate fails closed
    closed = options.fail_on_regression and verdict.regressed is not False
    return (1 if closed else 0), _gate_finding(options.baseline, verdict)


def _note(gathered: Gathered, say: Callable[[str], None], warning: str) -> None:
    """A warning for the terminal that the reports repeat."""
    say(f"warning: {warning}")
    gathered.notes.append(warning)


def _verified_state(client: ApiClient, agent_id: str, screening_id: str) -> str | None:
    """verified, partial or self_reported over the screening's runs (LOOP.md section 4)."""
    reply = client.get(f"/agents/{segment(agent_id)}/stats", screening=screening_id)
    state = reply.body.get("verified_state") if reply.ok else None
    return None if state is None else str(state)


def _incomplete(
    document: dict[str, Any], stored: int, dispatched: int, sid: str, say: Callable[[str], None]
) -> str | None:
    """Why the screening is incomplete (said on stderr with how to finish it), or None."""
    complete = document.get("complete")
    if complete is False:
        say(
            f"error: screening {sid!r} is incomplete: {stored_of_planned(document)}; "
            f"`screen ... --screening-id {sid} --resume` dispatches only what is missing"
        )
        return f"incomplete: {stored_of_planned(document)}"
    if complete is None and stored < dispatched:  # no plan (not a grader key): no resume
        say(
            f"error: screening {sid!r} is incomplete: {dispatched - stored} of the "
            f"{dispatched} runs dispatched are not in the collector; screen again under "
            "another --screening-id (with a grader key, --resume could finish it)"
        )
        return f"incomplete: {dispatched - stored} of the {dispatched} runs are not stored"
    return None


def _screened(document: dict[str, Any]) -> str:
    """`screened: 8 of 10 tasks passed every round`."""
    tasks = document.get("tasks") or []
    every = sum(1 for t in tasks if t["runs"] and t["successes"] == t["runs"])
    return f"screened: {every} of {len(tasks)} tasks passed every round"


def _gate_finding(baseline: str, verdict: Verdict) -> str:
    """What the gate found, in the words of a headline."""
    if verdict.body is None:
        return f"not compared with {baseline}: {verdict.problem}"
    regressed = [
        f"{axis} (p adj. {change['p_adjusted']:.4f})"
        for axis, change in verdict.body["axes"].items()
        if change["verdict"] == "regressed"
    ]
    if not regressed:
        return f"no regression against {baseline}"
    return f"regressed against {baseline}: {', '.join(regressed)}"
