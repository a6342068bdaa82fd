"""Record a hand-written tool loop whose ONLY instrumentation is on the model client: the
OpenTelemetry contrib GenAI instrumentation `opentelemetry-instrumentation-openai-v2` (with
`opentelemetry-util-genai`), message content captured on the spans.

The loop, tools and scenarios are in `hand_loop.py` (no spans of their own): a run is the root
`badge.run` and one `chat <model>` CLIENT span per model call. The tool calls exist only as the
calls the model requested, in each chat span's `gen_ai.output.messages` (JSON text, parts of type
`tool_call`).

Content capture: on this version (openai-v2 2.4b0 with util-genai 1.1b0) the instrumentation is
always on the latest experimental GenAI conventions, and
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` must be `span_only` / `span_and_event` /
`event_only`: the value `true` is rejected with a warning and means NO_CONTENT (then no span
carries the requested calls). `span_only` puts `gen_ai.input.messages` / `gen_ai.output.messages`
on the span; `event_only` sends them as log records only (not traces).

Usage: /work/envs/openai_v2_client_only/bin/python recordings/openai_v2_client_only/record.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Before the instrumentation reads them (what a user sets in the environment).
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"

from kit import Recording  # noqa: E402
from openai_v2_client_only.hand_loop import FAKE, run_all  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402

SCENARIO = "openai_v2_client_only"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "hand-loop-genai"
BATCH = 6

PACKAGES = ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"]
NOTES = [
    "NO TOOL SPANS: the loop and tools make none; the only instrumentation is on the openai "
    "client. A run is `badge.run` plus one `chat <model>` span per model call.",
    "Model call spans: `chat scripted-gpt` (name `chat <request model>`), kind CLIENT, scope "
    "`opentelemetry.util.genai.handler` (util-genai makes the spans, not the openai-v2 "
    "module); `gen_ai.operation.name` `chat`, `gen_ai.provider.name` `openai`, model "
    "`gen_ai.request.model` / `gen_ai.response.model` `scripted-gpt`, tokens "
    "`gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` (ints), "
    '`gen_ai.response.finish_reasons` (`["tool_calls"]`), no cost.',
    "Requested tool calls: `gen_ai.output.messages`, JSON text, raw example "
    '`[{"role":"assistant","parts":[{"arguments":{"city":"Paris"},'
    '"name":"get_weather","id":"call_002_0","type":"tool_call"}],'
    '"finish_reason":"tool_calls"}]`; parallel calls are several parts of one message. '
    "Streamed calls carry the same (assembled from the deltas).",
    "TRAP: `gen_ai.input.messages` repeats the calls of earlier turns (assistant parts of type "
    "`tool_call`, tool parts of type `tool_call_response`) in every later call: only "
    "`gen_ai.output.messages` holds the calls this model call requested.",
    "Content capture (openai-v2 2.4b0 + util-genai 1.1b0): always the latest experimental "
    "GenAI conventions; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT must be SPAN_ONLY / "
    "EVENT_ONLY / SPAN_AND_EVENT (case-insensitive): `true` is rejected with a warning and "
    "means NO_CONTENT, and then no span carries the requested calls. SPAN_ONLY (this "
    "recording) puts the messages on the span as attributes; EVENT_ONLY sends them only as "
    "log records (`gen_ai.client.inference.operation.details`, Logs API, not in traces); no "
    "span events in any mode.",
    "A failed model call: status ERROR (message `Error code: 500 - ...`), no exception event, "
    "no output messages, no usage; `error.type` is the Python repr of the class, "
    "`<class 'openai.InternalServerError'>` (util-genai 1.1b0 sets the type object; the SDK "
    "warns `Invalid type <class 'type'> for attribute value` and stores its str).",
    "Versions: the newest openai-v2 (2.4b0) does not import with the newest util-genai (1.3b0, "
    "1.2b0: `No module named 'opentelemetry.util.genai.instruments'`); 1.1b0 is the newest "
    "that works. openai-v2 also imports httpx, which openai 3.x does not install.",
]


def main() -> int:
    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "A hand-written tool loop (plain functions, no spans) on the openai client (sync, "
            "async, streaming) against a scripted OpenAI-compatible server on localhost; the only "
            "instrumentation is the OTel contrib opentelemetry-instrumentation-openai-v2 "
            "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only), OTLP/HTTP protobuf, "
            f"BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    with rec:
        provider = rec.tracer_provider(service_name=SERVICE, transport="http", batch_size=BATCH)
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
