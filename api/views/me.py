"""The caller's own radar weights: read, save, forget (docs/loop.md
"Personal radar weights").

Saved per owner (the key's); /fitness called with that owner's key and no
`weights` parameter applies them. The headline composite never changes.
Saving and forgetting take a key even under --insecure, which opens reads only.
"""

from __future__ import annotations

import scoring
from api.auth import Caller
from api.ports import WeightStore
from api.schemas import SavedWeights
from api.views.agents import checked_weights


def my_weights(saved: WeightStore, caller: Caller) -> SavedWeights:
    weights = saved.radar_weights(caller.me())
    if weights is None:
        return SavedWeights(weights=scoring.default_weights(), saved=False)
    return SavedWeights(weights=weights, saved=True)


def save_weights(saved: WeightStore, caller: Caller, weights: dict[str, float]) -> SavedWeights:
    owner = caller.key_owner()
    checked = checked_weights(weights)
    saved.save_radar_weights(owner, checked)
    return SavedWeights(weights=checked, saved=True)


def forget_weights(saved: WeightStore, caller: Caller) -> None:
    saved.delete_radar_weights(caller.key_owner())
