"""/api/v1/me/radar-weights: the caller's own radar weights for /fitness (api.views.me)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response

from api.deps import CallerDep, WeightsDep
from api.errors import error
from api.json_bodies import MAX_BODY_BYTES, KeyFirstRoute, bound
from api.schemas import RadarWeights, SavedWeights
from api.views import me as views

router = APIRouter(prefix="/api/v1/me", tags=["me"], route_class=KeyFirstRoute)
NO_KEY: dict[int | str, dict[str, Any]] = {401: error("no key")}


@router.get("/radar-weights", response_model=SavedWeights, responses=NO_KEY)
def get_weights(caller: CallerDep, store: WeightsDep) -> SavedWeights:
    return views.my_weights(store, caller)


@router.put(
    "/radar-weights",
    response_model=SavedWeights,
    responses={**NO_KEY, 413: error(f"body over {MAX_BODY_BYTES} bytes")},
    openapi_extra=bound(MAX_BODY_BYTES),
)
def put_weights(
    caller: CallerDep, store: WeightsDep, body: Annotated[RadarWeights, Body()]
) -> SavedWeights:
    return views.save_weights(store, caller, body.weights)


@router.delete("/radar-weights", status_code=204, responses=NO_KEY)
def delete_weights(caller: CallerDep, store: WeightsDep) -> Response:
    views.forget_weights(store, caller)
    return Response(status_code=204)
