"""Convention files through a real collector (CONVENTIONS.md sections 4 and 7).

A tracing SDK made up here ("acme") marks roles in its own attribute with
JSON-quoted values, names tools only in span names and keeps usage as JSON
text: the built-ins recognise none of it. Given its file with
--conventions, a real `serve` (its decoder processes included) counts its
runs right; a file that does not load keeps `serve` from starting; the
`conventions` commands list, check and explain.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from sqlalchemy import create_engine, text

from bench.support.otlp import attrs, new_span_id, new_trace_id, span
from bench.support.servers import OtlpClient, cli, start_server
from tests.integration.harness import running_collector, wait_for

ACME = textwrap.dedent(
    """\
    convention: acme
    version: 1
    description: a tracing SDK made up for this test
    applies_to: {scope: 'acme.*'}
    tool:
      - when: {attr: acme.kind, equals: TOOL}
        tool_name: [{name: '^Tool: (.+)$'}]
        call_id: [{attr: acme.call}]
    llm:
      - when: {attr: acme.kind, equals: LLM}
        model: [{attr: acme.model}]
    agent:
      - when: {attr: acme.kind, equals: AGENT}
    usage:
      input_tokens: [{attr: acme.usage, json: tokens.prompt}]
      output_tokens: [{attr: acme.usage, json: tokens.completion}]
      cost_usd: [{attr: acme.usage, json: cost}]
    """
)
RUN_COLUMNS = "steps, llm_calls, input_tokens, output_tokens, cost_usd, cost_source"
RUN_COLUMNS += ", status, task_id, unrecognised_spans, conventions_digest"


def acme_trace(task: str) -> tuple[str, bytes]:
    """One run: the harness's root, acme's agent, two calls, two tools and a
    step span, and one span of a library nobody describes."""
    trace = new_trace_id()
    root, agent = new_span_id(), new_span_id()

    def acme(name: str, kind: str, **extra: Any) -> Span:
        values = {"acme.kind": json.dumps(kind), **extra}  # `"TOOL"`, quotes and all
        return span(trace, new_span_id(), name, parent=agent, attributes=values)

    usage = {"tokens": {"prompt": 10, "completion": 3}, "cost": 0.002}
    scopes = {
        "harness": [
            span(
                trace,
                root,
                "badge.run",
                attributes={"badge.task.id": task, "badge.run.success": True},
            )
        ],
        "acme.tracer": [
            span(trace, agent, "Agent: planner", parent=root, attributes={"acme.kind": '"AGENT"'}),
            acme(
                "Generation", "LLM", **{"acme.model": '"acme-1"', "acme.usage": json.dumps(usage)}
            ),
            acme("Tool: search", "TOOL", **{"acme.call": "c1"}),
            acme("Tool: fetch", "tool", **{"acme.call": "c2"}),
            acme(
                "Generation",
                "llm",
                **{"acme.usage": '{"tokens": {"prompt": "12", "completion": 4}, "cost": 0.003}'},
            ),
            acme("Step 1", "CHAIN"),  # acme's, but no role: known
        ],
        "mystery.lib": [span(trace, new_span_id(), "mystery", parent=agent)],  # unrecognised
    }
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.extend(attrs({"service.name": "acme-agent"}))
    for scope, spans in scopes.items():
        scope_spans = resource_spans.scope_spans.add()
        scope_spans.scope.name = scope
        scope_spans.spans.extend(spans)
    return trace.hex(), message.SerializeToString()


def runs_of(database_url: str) -> dict[str, dict[str, Any]]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(f"SELECT task_id, id, {RUN_COLUMNS} FROM runs"))
            return {row[0]: dict(row._mapping) for row in rows}
    finally:
        engine.dispose()


@pytest.fixture
def acme_file(tmp_path: Path) -> Path:
    path = tmp_path / "acme.yaml"
    path.write_text(ACME)
    return path


def test_a_made_up_familys_file_makes_a_real_collector_count_it_right(
    database_url: str, acme_file: Path
) -> None:
    key = cli("keys", "create", "--owner", "me", "--database-url", database_url).stdout.strip()
    listed = cli("conventions", "list", "--conventions", str(acme_file)).stdout
    digest = listed.splitlines()[-1].removeprefix("digest ")
    server = start_server(database_url, "--conventions", str(acme_file), "--decode-workers", "1")
    try:
        client = OtlpClient(server, key)
        trace_id, body = acme_trace("acme-1")
        client.export(body, "http")
        client.export(acme_trace("acme-2")[1], "grpc")
        client.close()
        runs = wait_for(lambda: (found := runs_of(database_url)) and len(found) == 2 and found)
    finally:
        assert server.stop() == 0
    for task in ("acme-1", "acme-2"):
        run = runs[task]
        assert (run["steps"], run["llm_calls"]) == (2, 2)
        assert (run["input_tokens"], run["output_tokens"]) == (22, 7)
        assert run["cost_usd"] == pytest.approx(0.005) and run["cost_source"] == "reported"
        assert (run["status"], run["unrecognised_spans"]) == ("completed", 1)
        assert run["conventions_digest"] == digest

    explained = cli(
        "conventions", "explain", runs["acme-1"]["id"], "--database-url", database_url
    ).stdout
    lines = explained.splitlines()
    assert (
        f"run {runs['acme-1']['id']}: 8 span(s), 1 unrecognised, conventions {digest}" == lines[0]
    )
    by_name = {line.strip().split("  ")[0]: line for line in lines[1:]}
    assert "acme:agent[0]" in by_name["Agent: planner"]
    assert "acme:tool[0]" in by_name["Tool: search"] and "tool " in by_name["Tool: search"]
    assert "acme:llm[0]" in by_name["Generation"]
    assert "acme (known, no rule)" in by_name["Step 1"]
    assert "unrecognised" in by_name["mystery"]
    assert "root" in by_name["badge.run"] and "unrecognised" not in by_name["badge.run"]


def test_without_the_file_the_same_run_shows_no_internals_and_says_so(tmp_path: Path) -> None:
    with running_collector(tmp_path) as c:
        c.post(acme_trace("blind")[1])
        c.settle()
        ((steps, llm_calls, unrecognised),) = wait_for(
            lambda: c.query("SELECT steps, llm_calls, unrecognised_spans FROM runs")
        )
    assert (steps, llm_calls) == (None, 0)
    assert unrecognised == 7  # every span but the root


def test_an_in_process_collector_reads_the_file_and_explain_reads_a_server(
    tmp_path: Path, acme_file: Path
) -> None:
    with running_collector(tmp_path, conventions=(str(acme_file),)) as c:
        c.post(acme_trace("inline")[1])
        c.settle()
        ((run_id, steps, llm_calls, tokens),) = wait_for(
            lambda: c.query("SELECT id, steps, llm_calls, input_tokens FROM runs")
        )
        assert (steps, llm_calls, tokens) == (2, 2, 22)
        url = c.http_url
        refused = cli("conventions", "explain", run_id, "--url", url, check=False)
        assert refused.returncode == 1 and "401" in refused.stderr  # the trace is the owner's
        shown = cli("conventions", "explain", run_id, "--url", url, env={"BADGE_KEY": c.key})
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"run {run_id}: 8 span(s), 1 unrecognised, conventions ")
    assert any("Tool: fetch" in line and "acme:tool[0]" in line for line in lines)


BAD = {
    "bad YAML": ("convention: x\nversion: [1\n", ":3: yaml: "),
    "unknown field": ("convention: x\nversion: 1\ncolour: red\n", ":3: colour: unknown field"),
    "unknown rule field": (
        "convention: x\nversion: 1\ntool:\n  - when: {attr: a}\n    colour: red\n",
        ":5: tool[0].colour: unknown field",
    ),
    "unknown condition field": (
        "convention: x\nversion: 1\nllm:\n  - when: {atr: a}\n",
        ":4: llm[0].when.atr: unknown field",
    ),
    "unknown source field": (
        "convention: x\nversion: 1\nusage:\n  input_tokens: [{attr: a, path: b}]\n",
        ":4: usage.input_tokens[0].path: unknown field",
    ),
    "bad regex": (
        "convention: x\nversion: 1\nagent:\n  - when: {name: '(('}\n",
        ":4: agent[0].when.name: invalid regular expression",
    ),
    "bad version": ("convention: x\nversion: 0\n", ":2: version: must be a whole number"),
    "attr and resource together": (
        "convention: x\nversion: 1\ntool:\n  - when: {attr: a, resource: b}\n",
        ":4: tool[0].when.resource: a condition has attr or resource, not both",
    ),
    "a built-in's name": ("convention: genai\nversion: 1\n", ":1: convention: the name 'genai'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_serve_refuses_to_start_on_a_file_that_does_not_load(tmp_path: Path, case: str) -> None:
    content, expected = BAD[case]
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    database = tmp_path / "never.db"
    done = cli(
        "serve",
        "--conventions",
        str(bad),
        "--database-url",
        f"sqlite:///{database}",
        "--grpc-port",
        "0",
        "--http-port",
        "0",
        check=False,
    )
    assert done.returncode == 2
    where = {"a built-in's name": "built-in/200-genai.yaml"}.get(case, str(bad))
    assert f"{where}{expected}" in done.stderr, done.stderr
    assert "listening" not in done.stdout
    assert not database.exists()  # stopped before it opened anything
    checked = cli("conventions", "check", str(bad), check=False)
    assert checked.returncode == 2
    named = [line.strip() for line in done.stderr.splitlines() if line.startswith("  ")]
    assert checked.stdout.splitlines() == named  # check says what serve said


def test_serve_refuses_a_duplicate_name_given_through_the_environment(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("convention: mine\nversion: 1\n")
    (tmp_path / "b.yml").write_text("description: again\nconvention: mine\nversion: 2\n")
    database = tmp_path / "never.db"
    done = cli(
        "serve",
        "--database-url",
        f"sqlite:///{database}",
        env={"BADGE_CONVENTIONS": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 2
    assert f"{tmp_path / 'b.yml'}:2: convention: the name 'mine' is taken by" in done.stderr
    assert not database.exists()


def test_conventions_list_shows_the_users_files_first_then_the_built_ins(
    tmp_path: Path, acme_file: Path
) -> None:
    other = tmp_path / "more"
    other.mkdir()
    (other / "b.yaml").write_text("convention: second\nversion: 3\n")
    (other / "a.yml").write_text("convention: first\nversion: 2\n")
    (other / "notes.txt").write_text("not a convention")
    shown = cli("conventions", "list", "--conventions", str(acme_file), "--conventions", str(other))
    rows = [line.split() for line in shown.stdout.splitlines()[1:-1]]
    assert rows[:4] == [
        ["1", "acme", "1", str(acme_file)],
        ["2", "first", "2", str(other / "a.yml")],
        ["3", "second", "3", str(other / "b.yaml")],
        ["4", "pydantic-ai", "1", "built-in"],
    ]
    assert all(row[3] == "built-in" for row in rows[3:])
    digest = shown.stdout.splitlines()[-1]
    assert len(digest.removeprefix("digest ")) == 16
    same = cli(
        "conventions", "list", env={"BADGE_CONVENTIONS": f"{acme_file}:{other}"}
    ).stdout.splitlines()[-1]
    assert same == digest
    acme_file.write_text(ACME.replace("version: 1", "version: 2"))
    changed = cli(
        "conventions", "list", "--conventions", str(acme_file), "--conventions", str(other)
    )
    assert changed.stdout.splitlines()[-1] != digest


def test_conventions_check_passes_files_that_load(acme_file: Path) -> None:
    done = cli("conventions", "check", str(acme_file))
    assert done.returncode == 0 and done.stdout.startswith("ok: 1 file(s) load")


def test_conventions_check_lists_every_problem_of_every_file(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text("convention: one\nversion: 1\ncolour: red\nsize: 2\n")
    (tmp_path / "two.yaml").write_text("convention: two\nversion: x\n")
    done = cli(
        "conventions", "check", str(tmp_path / "one.yaml"), str(tmp_path / "two.yaml"), check=False
    )
    assert done.returncode == 2
    assert done.stdout.splitlines() == [
        f"{tmp_path / 'one.yaml'}:3: colour: unknown field of a convention file",
        f"{tmp_path / 'one.yaml'}:4: size: unknown field of a convention file",
        f"{tmp_path / 'two.yaml'}:2: version: must be a whole number from 1, not 'x'",
    ]


def test_explain_says_when_the_run_is_unknown(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    cli("db", "upgrade", "--database-url", url)
    done = cli("conventions", "explain", "no-such-run", "--database-url", url, check=False)
    assert done.returncode == 1 and "unknown run" in done.stderr
