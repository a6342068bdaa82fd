"""Recording a screening's plan with the collector before its first dispatch.

`POST /api/v1/screenings` (a grader key) stores the rounds and tasks about
to be dispatched: from then on the collector shows the screening
incomplete until a run is stored for each, whatever happens to this
process (issue 37 item 5). The same call refuses a screening id already
used, whose runs a second screening would silently replace (the run keys
are the same), unless `--resume`: the collector then answers which planned
dispatches have no run, and only those are sent.

With an agent key, or none (a collector under --insecure), there is no plan
(an agent may not plan its own screening): the command warns, refuses an id
whose screening exists, and cannot resume.
"""

from __future__ import annotations

from collections.abc import Callable

from collector.api_client import ApiClient, segment
from collector.screening.plan import Screening, Todo


class PlanRefused(Exception):
    """The screening cannot start: its id is in use, or the plan could not be recorded."""


def register(
    client: ApiClient, screening: Screening, *, resume: bool, say: Callable[[str], None]
) -> tuple[str | None, Todo | None]:
    """The agent's id (None: not known yet) and, for a resumed screening, what to dispatch."""
    plan = {
        "agent": screening.agent,
        "screening_id": screening.screening_id,
        "suite_name": screening.suite.name,
        "suite_digest": screening.suite.digest,
        "version": screening.version,
        "rounds": screening.rounds,
        "tasks": [task.id for task in screening.suite.tasks],
        "resume": resume,
    }
    reply = client.post("/screenings", plan)
    if reply.status == 409 and reply.unanswered_before:
        # A try the collector took, then went down before answering: the plan is ours.
        reply = client.post("/screenings", {**plan, "resume": True})
    if reply.status == 201:
        return str(reply.body["agent_id"]), None
    if reply.status == 200:
        todo = {m["task_id"]: frozenset(m["rounds"]) for m in reply.body["missing"]}
        return str(reply.body["agent_id"]), todo
    if reply.status == 409:
        hint = (
            ""
            if resume
            else "; --resume dispatches only what is missing, or pick another --screening-id"
        )
        raise PlanRefused(f"{reply.detail()}{hint}")
    if reply.status in (401, 403):  # keyless (--insecure) or an agent key: checked before
        _without_plan(client, screening, resume, say)
        return None, None
    if reply.status == 0:
        raise PlanRefused(f"cannot record the screening's plan: {reply.detail()}")
    raise PlanRefused(
        f"the collector refused the screening's plan ({reply.status}: {reply.detail()})"
    )


def _without_plan(
    client: ApiClient, screening: Screening, resume: bool, say: Callable[[str], None]
) -> None:
    """No grader key: no plan; an id in use is still refused, found through the read API."""
    sid = screening.screening_id
    if resume:
        raise PlanRefused("--resume needs a grader key (keys create --role grader)")
    for agent_id in client.agents_named(screening.agent):
        if client.get(f"/agents/{segment(agent_id)}/screenings/{segment(sid)}").ok:
            raise PlanRefused(
                f"screening {sid!r} of agent {screening.agent!r} exists: running it again "
                "would replace its runs; pick another --screening-id"
            )
    say(
        "warning: without a grader key the screening's plan is not recorded: the collector "
        "cannot show it incomplete if runs are lost"
    )
