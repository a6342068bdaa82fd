"""Request dependencies: the stores, the caller's identity, page and filter parameters."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Depends, Header, Query, Request

from api.auth import Caller, KeyChecker, key_from_headers
from api.certificate_ports import CertificateDesk, CertificateReads
from api.ports import AgentWrites, GradeStore, PlanStore, ReadStore, RunFilter, WeightStore
from api.problems import Invalid


def get_store(request: Request) -> ReadStore:
    store: ReadStore = request.app.state.reads
    return store


def get_certificate_reads(request: Request) -> CertificateReads:
    reads: CertificateReads = request.app.state.certificate_reads
    return reads


def get_certificates(request: Request) -> CertificateDesk:
    desk: CertificateDesk = request.app.state.certificates
    return desk


def get_grades(request: Request) -> GradeStore:
    grades: GradeStore = request.app.state.grades
    return grades


def get_plans(request: Request) -> PlanStore:
    plans: PlanStore = request.app.state.plans
    return plans


def get_agent_writes(request: Request) -> AgentWrites:
    writes: AgentWrites = request.app.state.agent_writes
    return writes


def get_weights(request: Request) -> WeightStore:
    weights: WeightStore = request.app.state.weights
    return weights


def get_caller(
    request: Request,
    authorization: Annotated[
        str | None, Header(description="`Bearer KEY`: what only its owner may see shows in full")
    ] = None,
    x_api_key: Annotated[
        str | None, Header(description="`KEY`: the key, instead of `authorization`")
    ] = None,
) -> Caller:
    keys: KeyChecker = request.app.state.keys
    headers = {"authorization": authorization or "", "x-api-key": x_api_key or ""}
    key = key_from_headers(headers)
    holder = keys.authenticate(key) if key else None
    return Caller(
        owner=holder.owner if holder else None,
        open=request.app.state.insecure,
        role=holder.role if holder else None,
    )


StoreDep = Annotated[ReadStore, Depends(get_store)]
CertificateReadsDep = Annotated[CertificateReads, Depends(get_certificate_reads)]
DeskDep = Annotated[CertificateDesk, Depends(get_certificates)]
WeightsDep = Annotated[WeightStore, Depends(get_weights)]
GradesDep = Annotated[GradeStore, Depends(get_grades)]
PlansDep = Annotated[PlanStore, Depends(get_plans)]
AgentWritesDep = Annotated[AgentWrites, Depends(get_agent_writes)]
CallerDep = Annotated[Caller, Depends(get_caller)]
PageSize = Annotated[int, Query(ge=1, le=500, description="items per page")]
Cursor = Annotated[
    str | None,
    Query(
        description="opaque cursor from `next_cursor`",
        max_length=200,
        json_schema_extra={"pattern": r"^[A-Za-z0-9_-]*={0,2}$"},  # base64url; checked on use
    ),
]


def _instant(name: str, text: str | None) -> float | None:
    """An RFC 3339 time as epoch seconds; Invalid when it is not one."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{name} must be an RFC 3339 time, not {text!r}") from None
    if moment.tzinfo is None:
        raise Invalid(f"{name} needs a UTC offset (e.g. Z): {text!r}")
    return moment.timestamp()


def get_filter(
    version: Annotated[str | None, Query(description="only runs of this agent version")] = None,
    since: Annotated[
        str | None,
        Query(
            description="only runs that became terminal at or after (RFC 3339; "
            "the collector's clock)",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    until: Annotated[
        str | None,
        Query(
            description="only runs that became terminal before (RFC 3339; the collector's clock)",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    screening: Annotated[
        str | None, Query(description="only the runs of this screening (docs/screening.md)")
    ] = None,
) -> RunFilter:
    return RunFilter(
        version=version,
        since=_instant("since", since),
        until=_instant("until", until),
        screening=screening,
    )


FilterDep = Annotated[RunFilter, Depends(get_filter)]
