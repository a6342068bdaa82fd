"""Certificates of a run, a screening and an agent's score (docs/certificates.md).

What a certificate says is decided here, from the views that answer the
keyless API, so it holds public fields only: a run's is its keyless run
summary field for field (api.render.run_summary of api.visibility.shown_to
for a keyless caller: a field added to the summary is certified too),
never a prompt, an output, an expected answer or an attribute value. The
desk (api.certificate_ports) signs, stores and logs. Anyone who may read
the summary, screening or agent may read its certificate: all keyless,
soft-deleted agents included (CERTS.md section 3).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

import scoring
from api.auth import Caller
from api.certificate_ports import (
    Certificate,
    CertificateDesk,
    CertificateReads,
    CertificateRequest,
)
from api.ports import ALL_RUNS, AgentInfo, ReadStore, RunInfo, ScreenedRun
from api.problems import Conflict, NotFound
from api.render import run_summary
from api.views.agents import fitness_of, stats_of
from api.views.runs import find_run
from api.views.screenings import screening_detail
from api.visibility import public_error_class, shown_to
from scoring import policy

KEYLESS = Caller(owner=None, open=False)  # what a certificate may show: the public view
SCREENINGS_CERTIFIED = 10  # CERTS.md section 2: a score names at most 10 screenings
_RUN_PAGE = 500


def _basis(value: Any) -> str:
    """A digest of what a certificate was computed from, compared with itself only."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _agent(reads: CertificateReads, agent_id: str) -> AgentInfo:
    try:
        uuid.UUID(agent_id)
    except ValueError:
        raise NotFound("unknown agent") from None
    agent = reads.agent_record(agent_id)
    if agent is None:
        raise NotFound("unknown agent")
    return agent


def _agent_fields(agent: AgentInfo) -> dict[str, Any]:
    return {"id": agent.id, "name": agent.name, "owner": agent.owner}


# -- runs -------------------------------------------------------------------


def run_certificate(
    store: ReadStore, reads: CertificateReads, desk: CertificateDesk, run_id: str
) -> Certificate:
    run = find_run(store, run_id)
    return certified_runs(reads, desk, run.agent_id, [run])[run.id]


def certified_runs(
    reads: CertificateReads, desk: CertificateDesk, agent_id: str, runs: Sequence[RunInfo]
) -> dict[str, Certificate]:
    """Each run's current certificate, issued where its summary changed since
    (or never was): an unchanged run is answered from storage without its spans."""
    for run in runs:
        if run.status not in policy.TERMINAL_STATUSES:
            raise Conflict(f"run {run.id} is {run.status}: certificates are of terminal runs")
    summaries = {run.id: run_summary(*shown_to(KEYLESS, run)).model_dump() for run in runs}
    stored = desk.newest(agent_id, [f"run:{run.id}" for run in runs])
    found: dict[str, Certificate] = {}
    for run in runs:
        subject, basis = f"run:{run.id}", _basis(summaries[run.id])
        current = stored.get(subject)
        if current is not None and current.basis == basis:
            found[run.id] = current
            continue
        spans = reads.canonical_spans(run)
        key = spans.root_key
        content = {
            "run": summaries[run.id],
            "spans": {"count": spans.count, "digest": spans.digest},
            "key": None if key is None else {"id": key.id, "role": key.role},
        }
        request = CertificateRequest("run", subject, agent_id, content, basis)
        found[run.id] = desk.issue(request, current)
    return found


def canonical_trace(
    store: ReadStore, reads: CertificateReads, caller: Caller, run_id: str
) -> bytes:
    """Owner only, like the trace: the exact list the spans digest covers."""
    run = find_run(store, run_id)
    caller.require_reader(run.owner)
    return reads.canonical_spans(run).body


# -- screenings -------------------------------------------------------------


def screening_certificate(
    store: ReadStore,
    reads: CertificateReads,
    desk: CertificateDesk,
    screening_id: str,
    agent_id: str | None = None,
) -> Certificate:
    """A screening id is chosen by the harness, so two agents may share one:
    then `agent_id` says whose."""
    agents = reads.screening_agents(screening_id)
    if not agents or (agent_id is not None and agent_id not in agents):
        raise NotFound(f"unknown screening {screening_id!r}")
    if agent_id is None and len(agents) > 1:
        raise Conflict(
            f"screening {screening_id!r} names runs of {len(agents)} agents: add ?agent_id="
        )
    return certified_screening(
        store, reads, desk, _agent(reads, agent_id or agents[0]), screening_id
    )


def _screening_runs(store: ReadStore, agent_id: str, screening_id: str) -> list[RunInfo]:
    found: list[RunInfo] = []
    before = None
    while True:
        page = store.runs(
            agent_id=agent_id,
            task_id=None,
            status=None,
            screening=screening_id,
            before=before,
            limit=_RUN_PAGE,
        )
        found += [run for run, _ in page]
        if len(page) < _RUN_PAGE:
            return found
        last, started_ns = page[-1]
        before = (started_ns, last.id)


def certified_screening(
    store: ReadStore,
    reads: CertificateReads,
    desk: CertificateDesk,
    agent: AgentInfo,
    screening_id: str,
) -> Certificate:
    info = next((s for s in store.screenings(agent.id) if s.screening_id == screening_id), None)
    if info is None:
        raise NotFound(f"unknown screening {screening_id!r}")
    runs = _screening_runs(store, agent.id, screening_id)
    running = sum(run.status not in policy.TERMINAL_STATUSES for run in runs)
    if running:
        raise Conflict(f"screening {screening_id!r} has {running} run(s) still running")
    per_run = certified_runs(reads, desk, agent.id, runs)
    screened = [
        ScreenedRun(r.record, r.round, public_error_class(r.error_class))
        for r in store.screening_runs(agent.id, screening_id)
    ]
    detail = screening_detail(info, screened)
    graded = sum(r.status == "completed" and r.success_source == "graded" for r in runs)
    radar = detail.radar.model_dump()
    content = {
        "agent": _agent_fields(agent),
        "version": info.version,
        "suite": {
            "name": info.suite_name,
            "digest": info.suite_digest,
            "tasks": len({r.task_id for r in runs if r.task_id is not None}),
            "rounds": info.rounds,
        },
        "scores": {
            "composite": detail.composite_score,
            "radar": {axis: radar[axis] for axis in policy.RADAR_AXES},
            "pass_1": detail.pass_1,
            "pass_3": detail.pass_3,
            "pass_5": detail.pass_5,
            "verified_state": scoring.verified_state(info.completed_runs, graded),
            "runs_counted": detail.radar.runs_counted,
        },
        "runs": [per_run[run.id].statement_digest for run in sorted(runs, key=lambda r: r.id)],
    }
    return _issue(
        desk, CertificateRequest("screening", f"screening:{screening_id}", agent.id, content)
    )


# -- an agent's score -------------------------------------------------------


def agent_certificate(
    store: ReadStore, reads: CertificateReads, desk: CertificateDesk, agent_id: str
) -> Certificate:
    agent = _agent(reads, agent_id)
    scores = store.scores(agent.id, ALL_RUNS)
    counts = scores.counts
    if counts.completed + counts.failed + counts.timeout == 0:
        raise Conflict(f"agent {agent.id} has no terminal run yet: nothing to certify")
    stats = stats_of(agent.id, counts, scores.composite)
    fitness = fitness_of(store.radar_runs(agent.id), None, scores.composite)
    screenings: list[str] = []
    for info in store.screenings(agent.id):  # newest first
        if len(screenings) == SCREENINGS_CERTIFIED:
            break
        try:
            screenings.append(
                certified_screening(store, reads, desk, agent, info.screening_id).statement_digest
            )
        except Conflict:
            continue  # still running: the newest finished ones are named
    content = {
        "agent": _agent_fields(agent),
        "composite": stats.model_dump(exclude={"agent_id"}),
        "radar": {
            **{axis: getattr(fitness, axis) for axis in policy.RADAR_AXES},
            "runs_counted": fitness.runs_counted,
        },
        "verified_state": stats.verified_state,
        "runs_counted": stats.completed_runs,
        "screenings": screenings,
    }
    return _issue(desk, CertificateRequest("score", f"agent:{agent.id}", agent.id, content))


def _issue(desk: CertificateDesk, request: CertificateRequest) -> Certificate:
    current = desk.newest(request.agent_id, [request.subject]).get(request.subject)
    return desk.issue(request, current)
