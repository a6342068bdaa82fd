"""`api.ports.PlanStore`: a screening's plan, recorded by the batch writer.

Like a grade, a plan goes into the writer's next transaction as a job and is
answered only once committed, so a plan acknowledged is a plan kept (a
screener killed right after still leaves its screening marked incomplete).
What the plan says and how it meets the screening's runs is
`storage.screenings`.
"""

from __future__ import annotations

from api.ports import PlanInput, PlanReceipt
from api.problems import Conflict, Unavailable
from collector.assembly.identity import agent_id
from collector.errors import Overloaded
from collector.runs.queue import JobSink, TraceQueue
from collector.storage.screenings import register_plan
from collector.types import Clock


class PlanDesk:
    def __init__(self, writer: JobSink, clock: Clock, queue: TraceQueue) -> None:
        self._writer = writer
        self._clock = clock
        self._queue = queue

    def register_plan(self, owner: str, plan: PlanInput) -> PlanReceipt:
        agent = agent_id(owner, plan.agent)  # the agent may have no span yet
        now = self._clock()
        try:
            created, conflict, stored, recheck = self._writer.submit_job(
                lambda session: register_plan(session, agent, owner, plan, now)
            ).result()
        except Overloaded as exc:
            raise Unavailable(str(exc), exc.retry_after_s) from None
        if conflict is not None:
            raise Conflict(conflict)
        self._queue.notify(recheck)  # runs of the agent's own that named it leave it
        missing = {
            task: tuple(r for r in range(1, plan.rounds + 1) if r not in stored.get(task, ()))
            for task in plan.tasks
        }
        return PlanReceipt(
            agent_id=agent,
            created=created,
            planned_runs=plan.rounds * len(plan.tasks),
            stored_runs=sum(len(rounds) for rounds in stored.values()),
            missing={task: rounds for task, rounds in missing.items() if rounds},
        )
