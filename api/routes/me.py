"""/api/v1/me/radar-weights: the caller's own radar weights for /fitness.

Saved per owner (the key's); /fitness called with that owner's key and no
`weights` parameter applies them. The headline composite never changes.
Saving and deleting take a key even under --insecure, which opens reads only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Response
from pydantic import BaseModel, Field

import scoring
from api.deps import CallerDep, WeightsDep
from api.errors import error

router = APIRouter(prefix="/api/v1/me", tags=["me"])
NO_KEY: dict[int | str, dict[str, Any]] = {401: error("no key")}


class RadarWeights(BaseModel):
    weights: dict[str, float] = Field(
        description="axis -> weight: finite, non-negative; axes not named get 0"
    )


class SavedWeights(RadarWeights):
    saved: bool = Field(description="false: no weights saved, these are the defaults")


@router.get("/radar-weights", response_model=SavedWeights, responses=NO_KEY)
def get_weights(caller: CallerDep, store: WeightsDep) -> SavedWeights:
    saved = store.radar_weights(caller.me())
    if saved is None:
        return SavedWeights(weights=scoring.default_weights(), saved=False)
    return SavedWeights(weights=saved, saved=True)


@router.put("/radar-weights", response_model=SavedWeights, responses=NO_KEY)
def put_weights(
    caller: CallerDep, store: WeightsDep, body: Annotated[RadarWeights, Body()]
) -> SavedWeights:
    owner = caller.key_owner()
    try:
        checked = scoring.validate_weights(body.weights)
    except ValueError as exc:
        raise HTTPException(422, f"bad weights: {exc}") from None
    store.save_radar_weights(owner, checked)
    return SavedWeights(weights=checked, saved=True)


@router.delete("/radar-weights", status_code=204, responses=NO_KEY)
def delete_weights(caller: CallerDep, store: WeightsDep) -> Response:
    store.delete_radar_weights(caller.key_owner())
    return Response(status_code=204)
