"""Record a hand-written tool loop whose ONLY instrumentation is on the model client: OpenLLMetry's
(traceloop) `opentelemetry-instrumentation-openai` 0.54.0, the last version that writes prompts and
completions as indexed attributes (`gen_ai.prompt.<i>.*`, `gen_ai.completion.<i>.*`); 0.55.0 and
later write `gen_ai.input.messages` / `gen_ai.output.messages` (openllmetry_client_only).

The loop, tools and scenarios are the ones of openai_v2_client_only (`hand_loop.py`, imported from
there, no spans of their own): a run is the root `badge.run` and one `openai.chat` CLIENT span per
model call. The tool calls exist only as the calls the model requested, in each span's
`gen_ai.completion.<i>.tool_calls.<j>.*` attributes (content capture is on by default in
OpenLLMetry: `TRACELOOP_TRACE_CONTENT` unset means true).

Usage:
    /work/envs/openllmetry_legacy_client_only/bin/python \
        recordings/openllmetry_legacy_client_only/record.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording  # noqa: E402
from openai_v2_client_only.hand_loop import FAKE, run_all  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

SCENARIO = "openllmetry_legacy_client_only"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "hand-loop-openllmetry-legacy"
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
    "`opentelemetry.instrumentation.openai.v1` (0.54.0); role only in `llm.request.type` "
    "`chat` (NO `gen_ai.operation.name`), `gen_ai.system` `openai`, model "
    "`gen_ai.request.model` / `gen_ai.response.model` `scripted-gpt`, tokens "
    "`gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` (ints), "
    "`llm.usage.total_tokens`, no cost.",
    "Requested tool calls: `gen_ai.completion.<i>.tool_calls.<j>.name` (`get_weather`), "
    '`.id` (`call_002_0`), `.arguments` (JSON text `{"city": "Paris"}`); parallel calls '
    "are j = 0..n-1 under completion 0. Streaming spans carry the same keys (assembled from "
    "the deltas), and `llm.content.completion.chunk` events.",
    "TRAP: `gen_ai.prompt.<i>.tool_calls.<j>.name` / `.id` / `.arguments` also exist: the "
    "calls of EARLIER turns, repeated in the prompt history of every later call (and "
    "`gen_ai.prompt.<i>.tool_call_id` on tool messages). Counting those would count every call "
    "again at each later model call: only `gen_ai.completion.*` are the calls this model call "
    "requested.",
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
            "instrumentation is OpenLLMetry's opentelemetry-instrumentation-openai 0.54.0 (no "
            f"Traceloop SDK), OTLP/gRPC, BatchSpanProcessor(max_export_batch_size={BATCH})."
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
