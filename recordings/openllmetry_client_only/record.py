"""Record a hand-written tool loop whose ONLY instrumentation is on the model client: OpenLLMetry's
(traceloop) `opentelemetry-instrumentation-openai`, without the Traceloop SDK.

The loop, tools and scenarios are the ones of openai_v2_client_only (`hand_loop.py`, imported from
there, no spans of their own): a run is the root `badge.run` and one `openai.chat` CLIENT span per
model call. The tool calls exist only as the calls the model requested. Since 0.55.0 OpenLLMetry
writes them as the GenAI conventions do: `gen_ai.output.messages` (JSON text, parts of type
`tool_call`), no longer the indexed `gen_ai.completion.<i>.tool_calls.<j>.*` attributes
(openllmetry_legacy_client_only records 0.54.0, the last version with those). Content capture is
on by default in OpenLLMetry (`TRACELOOP_TRACE_CONTENT` unset means true).

Usage: /work/envs/openllmetry_client_only/bin/python recordings/openllmetry_client_only/record.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording  # noqa: E402
from openai_v2_client_only.hand_loop import FAKE, run_all  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

SCENARIO = "openllmetry_client_only"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "hand-loop-openllmetry"
BATCH = 6

PACKAGES = [
    "opentelemetry-instrumentation-openai",
    "opentelemetry-semantic-conventions-ai",
    "openai",
]
NOTES = [
    "NO TOOL SPANS: the loop and tools make none; the only instrumentation is on the openai "
    "client. A run is `badge.run` plus one `openai.chat` span per model call.",
    "Model call spans: `openai.chat`, kind CLIENT, scope "
    "`opentelemetry.instrumentation.openai.v1` (0.62.4); `gen_ai.operation.name` `chat` (no "
    "`llm.request.type` any more), model `gen_ai.request.model` / `gen_ai.response.model` "
    "`scripted-gpt`, `gen_ai.provider.name` `openai`, tokens `gen_ai.usage.input_tokens` / "
    "`gen_ai.usage.output_tokens` / `gen_ai.usage.total_tokens` (ints), no cost.",
    "Requested tool calls: `gen_ai.output.messages`, JSON text, raw example "
    '`[{"role": "assistant", "parts": [{"type": "tool_call", "name": '
    '"get_weather", "id": "call_007_0", "arguments": {"city": "Paris"}}, '
    '...], "finish_reason": "tool_call"}]` (call id in the part\'s `id`; parallel calls are '
    "several parts of one message). Streaming adds an empty text part before the tool_call "
    "part, and `gen_ai.content.completion.chunk` events (one per chunk). Since 0.55.0: the "
    "indexed `gen_ai.completion.<i>.tool_calls.<j>.*` keys are gone (0.54.0 still has them).",
    "Also on the span: `gen_ai.input.messages` (JSON text, parts), `gen_ai.tool.definitions` "
    "(JSON text), `gen_ai.is_streaming`, `gen_ai.openai.api_base`, "
    '`gen_ai.response.finish_reasons` (`["tool_call"]`).',
    "A failed model call: status ERROR, `error.type` `InternalServerError`, an `exception` "
    "event, no response model, no usage.",
]


def main() -> int:
    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "A hand-written tool loop (plain functions, no spans) on the openai client (sync, "
            "async, streaming) against a scripted OpenAI-compatible server on localhost; the only "
            "instrumentation is OpenLLMetry's opentelemetry-instrumentation-openai (no Traceloop "
            f"SDK), OTLP/gRPC, BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    with rec:
        provider = rec.tracer_provider(service_name=SERVICE, transport="grpc", batch_size=BATCH)
        trace.set_tracer_provider(provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        problems = run_all(rec, provider)
    FAKE.stop()
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
