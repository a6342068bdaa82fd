"""`/docs`: the read API's reference, rendered on the server from `/openapi.json`.

FastAPI's own `/docs` and `/redoc` loaded Swagger UI or ReDoc, their styles
and fonts from CDNs, unpinned and without a Content-Security-Policy, and
rendered blank offline (issue 29), though no dashboard page may load anything
from another site. This page shows the same document, every operation with
its parameters, request body and responses, and every schema with its fields,
as plain HTML under the dashboard's strict CSP. It reads the app's OpenAPI
document (the one `/openapi.json` serves), so it cannot drift from the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from api.dashboard.pages import page

router = APIRouter(include_in_schema=False)
METHODS = ("get", "post", "put", "patch", "delete")
SCHEMA_ANCHOR = "schema-"


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a type as shown: text, linked to a schema when it names one."""

    text: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A parameter or a field: its name, type, whether required, and what it is."""

    name: str
    kind: list[Part]
    required: bool
    description: str
    where: str = ""  # a parameter's: query, path or header


@dataclass(frozen=True, slots=True)
class Answer:
    status: str
    description: str
    kind: list[Part]
    media: str


@dataclass(slots=True)
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    paragraphs: list[str]
    parameters: list[Row] = field(default_factory=list)
    body: list[Part] | None = None
    answers: list[Answer] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Schema:
    name: str
    anchor: str
    paragraphs: list[str]
    fields: list[Row]


@router.get("/docs", response_class=HTMLResponse)
def reference(request: Request) -> HTMLResponse:
    """The reference, grouped by tag in the document's order, then the schemas."""
    document: dict[str, Any] = request.app.openapi()
    groups: dict[str, list[Operation]] = {}
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                operation = _operation(method, path, item[method])
                tag = (item[method].get("tags") or ["other"])[0]
                groups.setdefault(tag, []).append(operation)
    schemas = [
        Schema(name, SCHEMA_ANCHOR + name, _paragraphs(body.get("description")), _fields(body))
        for name, body in sorted(document.get("components", {}).get("schemas", {}).items())
    ]
    return page(
        "api.html",
        title="API",
        info=document.get("info", {}),
        openapi_version=document.get("openapi", ""),
        groups=list(groups.items()),
        schemas=schemas,
    )


def _operation(method: str, path: str, spec: dict[str, Any]) -> Operation:
    operation = Operation(
        method=method.upper(),
        path=path,
        anchor="op-" + str(spec.get("operationId") or f"{method}-{path}"),
        summary=str(spec.get("summary") or ""),
        paragraphs=_paragraphs(spec.get("description")),
    )
    for parameter in spec.get("parameters", []):
        schema = parameter.get("schema", {})
        operation.parameters.append(
            Row(
                name=str(parameter["name"]),
                kind=kind(schema),
                required=bool(parameter.get("required")),
                description=_described(
                    parameter.get("description") or schema.get("description"), schema
                ),
                where=str(parameter.get("in", "")),
            )
        )
    body = spec.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        operation.body = kind(body.get("schema", {}))
    for status, answer in spec.get("responses", {}).items():
        content = answer.get("content") or {"": {}}
        media, shape = next(iter(content.items()))
        operation.answers.append(
            Answer(
                str(status),
                str(answer.get("description", "")),
                kind(shape.get("schema", {})),
                media,
            )
        )
    return operation


def _fields(schema: dict[str, Any]) -> list[Row]:
    required = set(schema.get("required", []))
    return [
        Row(name, kind(spec), name in required, _described(spec.get("description"), spec))
        for name, spec in schema.get("properties", {}).items()
    ]


def kind(schema: dict[str, Any]) -> list[Part]:
    """A JSON Schema as a short phrase: `array of RunSummary`, `string or null`."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return [Part(name, "#" + SCHEMA_ANCHOR + name)]
    for combined in ("anyOf", "oneOf"):
        if combined in schema:
            parts: list[Part] = []
            for index, option in enumerate(schema[combined]):
                parts += ([Part(" or ")] if index else []) + kind(option)
            return parts
    if len(schema.get("allOf", [])) == 1:
        return kind(schema["allOf"][0])
    if "enum" in schema:
        return [Part("one of " + ", ".join(str(value) for value in schema["enum"]))]
    if "const" in schema:
        return [Part(repr(schema["const"]))]
    shape = schema.get("type")
    if shape == "array":
        return [Part("array of ")] + kind(schema.get("items", {}))
    extra = schema.get("additionalProperties")
    if shape == "object" and isinstance(extra, dict):
        return [Part("map of string to ")] + kind(extra)
    text = str(shape or "any")
    if "format" in schema:
        text += f" ({schema['format']})"
    return [Part(text)]


_BOUNDS = (
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("default", "default {}"),
)


def _described(text: Any, schema: dict[str, Any]) -> str:
    """The description, then the bounds and default the schema states."""
    notes = [template.format(schema[key]) for key, template in _BOUNDS if key in schema]
    words = " ".join(str(text or "").split())
    return "; ".join(part for part in [words, ", ".join(notes)] if part)


def _paragraphs(text: Any) -> list[str]:
    """A docstring's paragraphs, each on one line (they are wrapped for the source)."""
    blocks = str(text or "").split("\n\n")
    return [" ".join(block.split()) for block in blocks if block.strip()]
