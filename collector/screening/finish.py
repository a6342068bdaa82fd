"""After the last dispatch: wait for the runs, print the screening, decide the exit code.

The collector says what it stored: the document of
`GET /agents/{id}/screenings/{screening_id}` has `complete` (every planned
dispatch has its run) when the plan was recorded. An incomplete screening
exits 2, with the command that dispatches what is missing, so that a CI job
never takes a screening that lost runs for a finished one (issue 37 item 5).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from collector.api_client import ApiClient
from collector.screening.document import fetch_document, wait_for_runs
from collector.screening.options import Options
from collector.screening.plan import Screening
from collector.screening.report import compare, print_table, stored_of_planned
from collector.screening.screener import Outcome

RUNS_WAIT_S = 10.0  # after --settle: how long to wait for runs still being assembled


def finish(
    client: ApiClient,
    screening: Screening,
    options: Options,
    agent_id: str | None,
    outcomes: list[Outcome],
    say: Callable[[str], None],
) -> int:
    """0 done; 1 the gate closed; 2 the screening is incomplete (or cannot be read)."""
    sid = screening.screening_id
    time.sleep(options.settle)  # the agent's own late spans (SCREEN.md section 4)
    found_id, runs = wait_for_runs(client, options.agent, agent_id, sid, outcomes, RUNS_WAIT_S)
    if found_id is None:
        say(f"error: none of the {len(outcomes)} runs of this screening is in the collector")
        return 2
    if len(runs) < len(outcomes):
        say(
            f"warning: {len(outcomes) - len(runs)} of the {len(outcomes)} runs dispatched now "
            "are not in the collector"
        )
    if any(run["success_source"] == "reported" for run in runs.values()):
        say(
            "warning: the key is an agent key: outcomes are reported, not graded, and this "
            "screening will not count as verified (use a grader key: keys create --role grader)"
        )
    reply = fetch_document(client, found_id, sid)
    if not reply.ok:
        say(f"error: cannot read screening {sid!r}: {reply.detail()}")
        return 2
    document: dict[str, Any] = reply.body
    if options.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print_table(document, outcomes, sys.stdout)
    complete = document.get("complete")
    incomplete = complete is False or (complete is None and len(runs) < len(outcomes))
    if complete is False:
        say(
            f"error: screening {sid!r} is incomplete: {stored_of_planned(document)}; "
            f"`screen ... --screening-id {sid} --resume` dispatches only what is missing"
        )
    elif incomplete:  # no plan (not a grader key): it cannot be resumed
        say(
            f"error: screening {sid!r} is incomplete: {len(outcomes) - len(runs)} of the "
            f"{len(outcomes)} runs dispatched are not in the collector; screen again under "
            "another --screening-id (with a grader key, --resume could finish it)"
        )
    gate = 0
    if options.baseline is not None:
        verdict = compare(client, found_id, options.baseline, sid)
        out = sys.stderr if options.json else sys.stdout
        for line in verdict.lines:
            print(line, file=out)
        if options.fail_on_regression and verdict.regressed is not False:
            gate = 1  # regressed, or could not be compared: a gate fails closed
    return 2 if incomplete else gate
