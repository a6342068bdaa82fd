"""What recognition reads of one span: a pure function's whole input
(CONVENTIONS.md: name, kind, status, scope, attributes, resource), so a
stored span can be recognised again from its bytes (section 5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# OTLP's SpanKind and StatusCode numbers, by the names conditions use.
KINDS: dict[str, int] = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
STATUSES: dict[str, int] = {"UNSET": 0, "OK": 1, "ERROR": 2}


class SpanView:
    """One span while it is recognised. `parsed` keeps attributes already
    read as JSON, so two usage sources on one JSON attribute parse it once."""

    __slots__ = ("name", "kind", "status", "scope", "attrs", "resource", "parsed")

    def __init__(
        self,
        name: str,
        kind: int,
        status: int,
        scope: str,
        attrs: Mapping[str, Any],
        resource: Mapping[str, Any],
    ) -> None:
        self.name = name
        self.kind = kind
        self.status = status
        self.scope = scope
        self.attrs = attrs
        self.resource = resource
        self.parsed: dict[str, Any] | None = None
