"""Certificates, their log and the signing keys (api.views.certificates,
api.views.certificate_log; docs/certificates.md). All keyless."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse, Response

from api.certificate_schemas import CertificateLog, CertificateStatus, Envelope, Jwks
from api.deps import CertificateReadsDep, DeskDep, StoreDep
from api.errors import error
from api.views import certificate_log as log_views
from api.views import certificates as views

router = APIRouter(tags=["certificates"])
ENVELOPE: dict[int | str, dict[str, Any]] = {
    200: {"model": Envelope, "description": "a DSSE envelope of an in-toto Statement v1"},
    409: error(
        "not terminal yet (a run or screening still running; an agent without a "
        "finished run), or a screening id several agents share"
    ),
    503: error("no signing key configured, or the database is unreachable"),
}


def _envelope(body: bytes) -> Response:
    return Response(body, media_type="application/json")


@router.get(
    "/api/v1/runs/{run_id}/certificate",
    responses={**ENVELOPE, 404: error("unknown run")},
    response_class=Response,
)
def run_certificate(
    run_id: str, store: StoreDep, reads: CertificateReadsDep, desk: DeskDep
) -> Response:
    """The run's certificate: its keyless summary, its spans digest and the
    key of its root, signed. Issued on first request, answered from storage
    while the run is unchanged, superseded when it changed."""
    return _envelope(views.run_certificate(store, reads, desk, run_id).envelope)


@router.get(
    "/api/v1/screenings/{screening_id:path}/certificate",
    responses={**ENVELOPE, 404: error("unknown screening")},
    response_class=Response,
)
def screening_certificate(
    screening_id: str,
    store: StoreDep,
    reads: CertificateReadsDep,
    desk: DeskDep,
    agent_id: Annotated[
        str | None, Query(description="whose screening, when several agents share its id")
    ] = None,
) -> Response:
    """The screening's certificate: its suite, scores and its runs' certificates by digest.
    The id is any a run's root named, percent-encoded (`/` as `%2F`), as the
    screening view takes it."""
    certificate = views.screening_certificate(store, reads, desk, screening_id, agent_id)
    return _envelope(certificate.envelope)


@router.get(
    "/api/v1/agents/{agent_id}/certificate",
    responses={**ENVELOPE, 404: error("unknown agent")},
    response_class=Response,
)
def agent_certificate(
    agent_id: str, store: StoreDep, reads: CertificateReadsDep, desk: DeskDep
) -> Response:
    """The agent's score certificate: its composite and inputs, radar,
    verified_state and its newest screening certificates (at most 10).
    A soft-deleted agent's still answers."""
    return _envelope(views.agent_certificate(store, reads, desk, agent_id).envelope)


@router.get("/api/v1/certificates/log", response_model=CertificateLog)
def certificate_log(
    desk: DeskDep,
    after: Annotated[
        int, Query(ge=0, le=2**62, description="entries after this one (0: from the first)")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> CertificateLog:
    """The append-only log of every certificate issued, in order, with its hash chain."""
    return log_views.log_page(desk, after, limit)


@router.get(
    "/api/v1/certificates/head",
    response_class=Response,
    responses={
        200: {"model": Envelope, "description": "a DSSE envelope of the log head"},
        503: error("no signing key configured, or the database is unreachable"),
    },
)
def certificate_head(desk: DeskDep) -> Response:
    """The log's size and chain now, signed: keep it to check later that the log only grew."""
    return _envelope(desk.head())


@router.get(
    "/api/v1/certificates/{statement_digest}",
    response_model=CertificateStatus,
    responses={404: error("not in the log")},
)
def certificate_status(
    statement_digest: Annotated[str, Path(pattern="^[0-9a-f]{64}$")], desk: DeskDep
) -> CertificateStatus:
    """A certificate's log entry by statement digest, and the digest of the one that
    superseded it (null: it is current)."""
    return log_views.status(desk, statement_digest)


@router.get("/.well-known/jwks.json", response_model=Jwks, tags=["certificates"])
def jwks(desk: DeskDep) -> JSONResponse:
    """Every public key that ever signed a certificate (RFC 8037 JWKs), the current one
    first; retired keys carry `badge:retired_at`."""
    return JSONResponse(log_views.jwks(desk))
