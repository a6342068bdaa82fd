"""Agent identity (docs/runs.md "Who owns what"): which agent a resource's spans belong to."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

AGENT_NAMESPACE = uuid.UUID("b1c4e0f2-7a55-5d0b-8f3e-2c9a6d41e7b8")


def agent_name(resource: Mapping[str, Any]) -> str:
    for key in ("badge.agent.id", "service.name"):
        value = resource.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown_service"


def agent_id(owner: str, name: str) -> str:
    """Stable, so every process and every restart gives an agent the same id."""
    return str(uuid.uuid5(AGENT_NAMESPACE, f"{owner}\x00{name}"))
