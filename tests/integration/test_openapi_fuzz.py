"""A property-based run over /openapi.json: no 5xx, every 200 fits its schema.

Schemathesis-style, with hypothesis: for every GET operation, path and query
parameters are drawn from their schema types plus hostile strings; 200
answers are validated against the response model the schema names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from api import loop_schemas, schemas
from api.errors import ErrorDetail
from tests.integration.harness import Collector, running_collector
from tests.integration.test_api import completed_runs, run_trace

HOSTILE = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "99999999999999999999",
        "null",
        "%00",
        "' OR 1=1 --",
        "😀",
        "a" * 300,
        "00000000-0000-0000-0000-000000000000",
        "correctness:1,latency:nan",
        "a:b:c",
    ]
)


@pytest.fixture(scope="module")
def populated(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> Iterator[tuple[Collector, dict]]:
    path = Path(tmp_path_factory.mktemp("fuzz"))
    with running_collector(path, database_url=module_database_url) as c:
        for i in range(5):
            c.post(run_trace(f"t{i % 2}", service="fuzzed"))
        completed_runs(c, 5)
        ids = {
            "agent_id": c.query("SELECT id FROM agents")[0][0],
            "run_id": c.query("SELECT id FROM runs")[0][0],
        }
        yield c, ids


def operations(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(path, item["get"]) for path, item in sorted(spec["paths"].items()) if "get" in item]


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    types = {s.get("type") for s in schema.get("anyOf", [schema])}
    options: list[st.SearchStrategy[Any]] = [HOSTILE]
    if "integer" in types:
        options.append(st.integers(-5, 600))
    if "boolean" in types:
        options.append(st.sampled_from(["true", "false", "1", "yes"]))
    if "string" in types:
        options.append(st.text(max_size=20))
    return st.one_of(options)


def model_for(operation: dict[str, Any]) -> Any:
    content = operation["responses"]["200"].get("content", {})
    ref = content.get("application/json", {}).get("schema", {}).get("$ref")
    if not ref:
        return None
    name = ref.rsplit("/", 1)[1]
    return getattr(schemas, name, None) or getattr(loop_schemas, name)


def test_every_get_operation_survives_generated_input(
    populated: tuple[Collector, dict[str, str]],
) -> None:
    collector, ids = populated
    spec = collector.http.get(f"{collector.http_url}/openapi.json").json()
    ops = operations(spec)
    assert len(ops) >= 9

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        path, operation = data.draw(st.sampled_from(ops))
        url = path
        params: dict[str, Any] = {}
        for param in operation.get("parameters", []):
            name = param["name"]
            if param["in"] == "path":
                real = ids.get(name)
                chosen = data.draw(st.one_of(st.just(real), HOSTILE) if real else HOSTILE)
                url = url.replace("{" + name + "}", str(chosen).replace("/", "%2F") or "x")
            elif param["in"] == "query" and data.draw(st.booleans()):
                params[name] = data.draw(value_for(param["schema"]))
        reply = collector.http.get(f"{collector.http_url}{url}", params=params)
        assert reply.status_code < 500, (url, params, reply.text)
        if reply.status_code != 200:  # every error is documented, with its body
            assert str(reply.status_code) in operation["responses"], (url, reply.status_code)
            ErrorDetail.model_validate(reply.json())
            return
        model = model_for(operation)
        if model is not None:
            TypeAdapter(model).validate_python(reply.json())

    check()
