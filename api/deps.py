"""Request dependencies: the store, the caller's identity, page parameters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Query, Request

from api.ports import GradeStore, KeyStore, ReadStore, RunFilter, WeightStore


@dataclass(frozen=True, slots=True)
class Caller:
    """Who reads: the owner of a valid key, or nobody; `open` under --insecure."""

    owner: str | None
    presented_key: bool
    open: bool
    role: str | None = None  # the key's: `agent` or `grader`

    def require_owner(self, owner: str) -> None:
        """docs/api.md: no key 401, another owner's key 403."""
        if self.open:
            return
        if self.owner is None:
            raise HTTPException(
                401,
                "an ingest key of the owner is required",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if self.owner != owner:
            raise HTTPException(403, "this key belongs to another owner")

    def personal(self) -> str | None:
        """The owner whose personal settings apply: the key's; `local` when
        --insecure lets keyless callers in (as keyless ingest); else None."""
        if self.owner is not None:
            return self.owner
        return INSECURE_OWNER if self.open else None

    def grader(self) -> str:
        """The owner a grade is stored under: a `grader` key's (401 without a
        key, 403 for an agent key). Under --insecure a keyless caller grades
        as `local`, as it ingests there."""
        if self.owner is None:
            if self.open and not self.presented_key:
                return INSECURE_OWNER
            raise HTTPException(
                401, "a grader key is required", headers={"WWW-Authenticate": "Bearer"}
            )
        if self.role != "grader":
            raise HTTPException(403, "only a key with the grader role may post grades")
        return self.owner

    def me(self) -> str:
        """The same, required: 401 without a key."""
        owner = self.personal()
        if owner is None:
            raise HTTPException(
                401, "an ingest key is required", headers={"WWW-Authenticate": "Bearer"}
            )
        return owner


# The owner of keyless ingest and personal settings under --insecure, and of
# the key a new database starts with: the one local user.
INSECURE_OWNER = "local"


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """`authorization: Bearer KEY` or `x-api-key: KEY` (lower-case header names).

    The one parser of keys: the read API and both OTLP doors use it.
    """
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    api_key = headers.get("x-api-key", "").strip()
    return api_key or None


def get_store(request: Request) -> ReadStore:
    store: ReadStore = request.app.state.reads
    return store


def get_grades(request: Request) -> GradeStore:
    grades: GradeStore | None = request.app.state.grades
    if grades is None:
        raise HTTPException(503, "grades are posted to a running server (badge-collector serve)")
    return grades


def get_weights(request: Request) -> WeightStore:
    weights: WeightStore = request.app.state.weights
    return weights


def get_caller(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_api_key: Annotated[str | None, Header()] = None,
) -> Caller:
    keys: KeyStore = request.app.state.keys
    headers = {"authorization": authorization or "", "x-api-key": x_api_key or ""}
    key = key_from_headers(headers)
    holder = keys.holder_of(key) if key else None
    return Caller(
        owner=holder.owner if holder else None,
        presented_key=key is not None,
        open=request.app.state.insecure,
        role=holder.role if holder else None,
    )


StoreDep = Annotated[ReadStore, Depends(get_store)]
WeightsDep = Annotated[WeightStore, Depends(get_weights)]
GradesDep = Annotated[GradeStore, Depends(get_grades)]
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
    """An RFC 3339 time as epoch seconds; 422 when it is not one."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise HTTPException(422, f"{name} must be an RFC 3339 time, not {text!r}") from None
    if moment.tzinfo is None:
        raise HTTPException(422, f"{name} needs a UTC offset (e.g. Z): {text!r}")
    return moment.timestamp()


def get_filter(
    version: Annotated[str | None, Query(description="only runs of this agent version")] = None,
    since: Annotated[
        str | None,
        Query(
            description="only runs that ended at or after (RFC 3339)",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    until: Annotated[
        str | None,
        Query(
            description="only runs that ended before (RFC 3339)",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
) -> RunFilter:
    return RunFilter(
        version=version, since=_instant("since", since), until=_instant("until", until)
    )


FilterDep = Annotated[RunFilter, Depends(get_filter)]
