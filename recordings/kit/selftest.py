"""Self-test of the kit: a hand-made agent with manual GenAI spans, through both doors.

    cd /work/main/recordings && /work/envs/kit/bin/python -m kit.selftest [--out DIR]

Writes a small recording (default /tmp/kit-selftest; never under tests/fixtures) and checks
that expected.json has the corpus's keys and that every run's numbers came out right.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from pathlib import Path

from opentelemetry.trace import SpanKind, Status, StatusCode

from kit import Recording, current

LANGFUSE_PATH = "/api/public/otel/v1/traces"
CORPUS_EXAMPLE = Path(__file__).resolve().parents[2] / "tests/fixtures/corpus/pydantic_ai"


def agent(tracer, script: list[list[str]], answer: str, fail_tool: str = "") -> str:
    """A plain agent loop: each script step is one model response asking for these tools."""
    with tracer.start_as_current_span("invoke_agent selftest-agent") as agent_span:
        agent_span.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent_span.set_attribute("gen_ai.agent.name", "selftest-agent")
        for step, tools in enumerate(script + [[]]):
            with tracer.start_as_current_span("chat scripted", kind=SpanKind.CLIENT) as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "scripted")
                chat.set_attribute("gen_ai.usage.input_tokens", 10 + step)
                chat.set_attribute("gen_ai.usage.output_tokens", 3)
                current().llm(input_tokens=10 + step, output_tokens=3)
                time.sleep(0.002)
            for i, name in enumerate(tools):
                with tracer.start_as_current_span(f"execute_tool {name}") as tool_span:
                    tool_span.set_attribute("gen_ai.operation.name", "execute_tool")
                    tool_span.set_attribute("gen_ai.tool.name", name)
                    tool_span.set_attribute("gen_ai.tool.call.id", f"call_{step}_{i}")
                    current().tool(name)
                    if name == fail_tool:
                        current().tool_error()
                        tool_span.set_status(Status(StatusCode.ERROR, "boom"))
                        raise RuntimeError(f"tool {name} failed")
        return answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("/tmp/kit-selftest"))
    args = parser.parse_args(argv)
    rec = Recording(scenario="kit_selftest", out=args.out, description="kit self-test")
    with rec:
        http = rec.tracer_provider(service_name="selftest-http", transport="http", batch_size=5)
        grpc = rec.tracer_provider(
            service_name="selftest-grpc", transport="grpc", batch_size=5, compression="gzip"
        )
        for provider, task, script, answer, expected, fail in [
            (http, "two-tools", [["search", "fetch"]], "42", "42", ""),
            (http, "wrong", [["search"], ["search"]], "41", "42", ""),
            (grpc, "crash", [["search"], ["fetch"]], "42", "42", "fetch"),
            (grpc, "no-tools", [], "hi", "hi", ""),
        ]:
            tracer = provider.get_tracer("selftest-agent", "1.0")
            with rec.run(provider, task_id=task, expected_output=expected) as run:
                run.output = agent(tracer, script, answer, fail)
                run.success = run.output == expected
        # The Langfuse SDK's path with Basic auth (the kit must record it, credential redacted).
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        basic = "Basic " + base64.b64encode(b"pk-lf-selftest:sk-lf-selftest").decode()
        langfuse = rec.tracer_provider(
            service_name="selftest-langfuse-path",
            exporter=OTLPSpanExporter(
                endpoint=f"{rec.http_base}{LANGFUSE_PATH}", headers={"Authorization": basic}
            ),
        )
        with rec.run(langfuse, task_id="langfuse-path", expected_output="hi") as run:
            run.output = agent(langfuse.get_tracer("selftest-agent", "1.0"), [], "hi")
            run.success = run.output == "hi"
        rec.flush()
    expected = rec.finish(packages=[], notes=["Self-test of the kit."])

    problems = []
    corpus = json.loads((CORPUS_EXAMPLE / "expected.json").read_text())
    if list(expected) != list(corpus):
        problems.append(f"top-level keys {list(expected)} != corpus {list(corpus)}")
    corpus_run = next(iter(corpus["runs"].values()))
    want = {
        "two-tools": ("ok", 2, 2, 0),
        "wrong": ("wrong_answer", 2, 3, 0),
        "crash": ("exception", 2, 2, 1),
        "no-tools": ("ok", 0, 1, 0),
        "langfuse-path": ("ok", 0, 1, 0),
    }
    for trace_id, run in expected["runs"].items():
        if list(run) != list(corpus_run):
            problems.append(f"run keys {list(run)} != corpus {list(corpus_run)}")
        got = (run["outcome"], run["tool_calls"], run["llm_calls"], run["tool_errors"])
        if got != want[run["task_id"]]:
            problems.append(f"{run['task_id']}: {got} != {want[run['task_id']]}")
        view = run["naive_span_view"]
        if (view["tool_spans"], view["llm_spans"]) != (run["tool_calls"], run["llm_calls"]):
            problems.append(f"{run['task_id']}: naive view {view}")
        if run["root_duration_ms"] is None or len(trace_id) != 32:
            problems.append(f"{run['task_id']}: root not found")
    doors = {json.loads(p.read_text())["transport"] for p in (args.out / "payloads").glob("*.json")}
    if doors != {"http", "grpc"}:
        problems.append(f"doors seen: {doors}")
    metas = [json.loads(p.read_text()) for p in (args.out / "payloads").glob("*.meta.json")]
    basic = [m for m in metas if m["path"] == LANGFUSE_PATH]
    if not basic or any(
        (
            m["authorization"],
            m.get("authorization_user"),
            {k.lower(): v for k, v in m["headers"].items()}.get("authorization"),
        )
        != ("Basic", "pk-lf-selftest", "Basic <redacted>")
        for m in basic
    ):
        problems.append(f"Langfuse path / Basic auth not recorded as expected: {basic}")
    if any(m["authorization"] is not None for m in metas if m["path"] != LANGFUSE_PATH):
        problems.append("an authorization kind recorded where none was sent")
    if expected["traces_without_run"]:
        problems.append(f"traces without run: {expected['traces_without_run']}")
    for problem in problems:
        print("PROBLEM:", problem, file=sys.stderr)
    print("selftest:", "FAILED" if problems else "ok", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
