"""Request dependencies: the store, the caller's identity, page parameters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, NoReturn

from fastapi import Depends, Header, HTTPException, Query, Request

from api.auth import INSECURE_OWNER, KeyChecker, key_from_headers
from api.ports import GradeStore, ReadStore, RunFilter, WeightStore


@dataclass(frozen=True, slots=True)
class Caller:
    """Who reads: the owner of a valid key, or nobody; `open` under --insecure.

    docs/api.md "Who may read what": --insecure opens every read (traces and
    the text a span or a grader wrote included) and no write: deleting an
    agent, posting a grade and saving radar weights still take a key.
    """

    owner: str | None
    open: bool
    role: str | None = None  # the key's: `agent` or `grader`

    def sees_owned(self, owner: str) -> bool:
        """May this caller read what only `owner` may (a trace, a grade's text)?"""
        return self.open or (self.owner is not None and self.owner == owner)

    def require_reader(self, owner: str) -> None:
        """An owner-only read: the owner's key, or anyone under --insecure."""
        if not self.sees_owned(owner):
            self._refuse()

    def require_owner(self, owner: str) -> None:
        """A write to the owner's things: their key, whatever the mode (no key
        401, another owner's key 403)."""
        if self.owner is None or self.owner != owner:
            self._refuse()

    def _refuse(self) -> NoReturn:
        if self.owner is None:
            raise HTTPException(
                401,
                "an ingest key of the owner is required",
                headers={"WWW-Authenticate": "Bearer"},
            )
        raise HTTPException(403, "this key belongs to another owner")

    def personal(self) -> str | None:
        """The owner whose personal settings apply when reading: the key's;
        `local` when --insecure lets keyless callers in (as keyless ingest);
        else None."""
        if self.owner is not None:
            return self.owner
        return INSECURE_OWNER if self.open else None

    def grader(self) -> str:
        """The owner a grade is stored under: a `grader` key's (401 without a
        key, --insecure or not; 403 for an agent key)."""
        if self.owner is None:
            raise HTTPException(
                401, "a grader key is required", headers={"WWW-Authenticate": "Bearer"}
            )
        if self.role != "grader":
            raise HTTPException(403, "only a key with the grader role may post grades")
        return self.owner

    def me(self) -> str:
        """`personal`, required (reading one's settings): 401 without a key."""
        owner = self.personal()
        if owner is None:
            raise _no_key()
        return owner

    def key_owner(self) -> str:
        """The owner of the caller's key, for a write: 401 without a valid key,
        --insecure or not."""
        if self.owner is None:
            raise _no_key()
        return self.owner


def _no_key() -> HTTPException:
    return HTTPException(401, "an ingest key is required", headers={"WWW-Authenticate": "Bearer"})


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
