"""Request dependencies: the store, the caller's identity, page parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Query, Request

from api.ports import KeyStore, ReadStore


@dataclass(frozen=True, slots=True)
class Caller:
    """Who reads: the owner of a valid key, or nobody; `open` under --insecure."""

    owner: str | None
    presented_key: bool
    open: bool

    def require_owner(self, owner: str) -> None:
        """API.md: no key 401, another owner's key 403."""
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


def get_store(request: Request) -> ReadStore:
    store: ReadStore = request.app.state.reads
    return store


def get_caller(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    x_api_key: Annotated[str | None, Header()] = None,
) -> Caller:
    keys: KeyStore = request.app.state.keys
    key = None
    if authorization and authorization[:7].lower() == "bearer ":
        key = authorization[7:].strip() or None
    key = key or (x_api_key.strip() if x_api_key else None)
    owner = keys.owner_of(key) if key else None
    return Caller(owner=owner, presented_key=key is not None, open=request.app.state.insecure)


StoreDep = Annotated[ReadStore, Depends(get_store)]
CallerDep = Annotated[Caller, Depends(get_caller)]
PageSize = Annotated[int, Query(ge=1, le=500, description="items per page")]
Cursor = Annotated[str | None, Query(description="opaque cursor from `next_cursor`")]
