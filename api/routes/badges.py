"""An agent's badge: the SVG and the shields.io endpoint JSON (api.views.badges;
CERTS.md section 5). Keyless, from the kept board, cached for five minutes."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, Response

from api.certificate_ports import BadgeInfo, CertificateReads
from api.certificate_schemas import BadgeEndpoint
from api.deps import CertificateReadsDep
from api.views.badges import Badge, badge_of, etag, svg

router = APIRouter(tags=["badges"])
HEADERS = {
    "cache-control": "max-age=300",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    "x-content-type-options": "nosniff",
}
SVG_TYPE = "image/svg+xml; charset=utf-8"


def _info(reads: CertificateReads, agent_id: str) -> BadgeInfo | None:
    try:
        uuid.UUID(agent_id)
    except ValueError:
        return None  # a malformed id is unknown, like any other
    return reads.badge(agent_id)


def _matches(if_none_match: str | None, tag: str) -> bool:
    """RFC 9110 section 13.1.2: weak comparison, a list, or `*`."""
    if if_none_match is None:
        return False
    given = [part.strip().removeprefix("W/") for part in if_none_match.split(",")]
    return "*" in given or tag in given


@router.get(
    "/badge/{agent_id}.svg",
    response_class=Response,
    responses={
        200: {"content": {"image/svg+xml": {}}, "description": "the badge"},
        304: {"description": "unchanged since the ETag given"},
        404: {"content": {"image/svg+xml": {}}, "description": "a grey `unknown` badge"},
    },
)
def badge_svg(
    agent_id: str,
    reads: CertificateReadsDep,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    """Flat, shields.io style: the name, then the composite and `✓ verified` or
    `self-reported` (`no runs`, `deleted`)."""
    shown: Badge = badge_of(_info(reads, agent_id))
    body = svg(shown)
    tag = etag(body)
    headers = {**HEADERS, "etag": tag}
    if shown.status == 200 and _matches(if_none_match, tag):
        return Response(status_code=304, headers=headers)
    return Response(body, status_code=shown.status, media_type=SVG_TYPE, headers=headers)


@router.get(
    "/api/v1/agents/{agent_id}/badge.json",
    response_model=BadgeEndpoint,
    responses={404: {"model": BadgeEndpoint, "description": "message `unknown`"}},
)
def badge_json(agent_id: str, reads: CertificateReadsDep) -> JSONResponse:
    """The badge's texts and colour in the shields.io endpoint schema
    (`https://img.shields.io/endpoint?url=...`)."""
    shown = badge_of(_info(reads, agent_id))
    body = {
        "schemaVersion": 1,
        "label": shown.label,
        "message": shown.message,
        "color": shown.color.removeprefix("#"),
    }
    return JSONResponse(body, status_code=shown.status, headers={"cache-control": "max-age=300"})
