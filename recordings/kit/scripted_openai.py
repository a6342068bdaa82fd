"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for recorders whose framework talks to
a model through the openai SDK (or any OpenAI-compatible client).

    fake = ScriptedOpenAI().start()        # fake.base_url = "http://127.0.0.1:P/v1"
    fake.load({"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("18C")]})
    client = openai.OpenAI(base_url=fake.base_url, api_key="sk-fake", max_retries=0)

`/v1/chat/completions` answers each request with the next step of the queue of its `model`:
`text(...)` (no tool call), `calls(...)` (one or more tool calls in one message: parallel tool
calls) or `fail(status, message)` (an HTTP error from the provider). `stream: true` is answered as
SSE chunks, with a final usage chunk when `stream_options.include_usage` is set, as OpenAI does.
Usage is derived from the request size (prompt) and the answer (completion) and returned in the
OpenAI `usage` object; each answered request is one `current().llm(...)` with that usage, each
scripted error one `current().llm_error()`: the ground truth of model calls is counted here, where
the HTTP request arrives (so `max_retries=0` on the client makes one model call one request).

`/v1/embeddings` answers with small vectors and usage and is NOT counted as a model call (an
embedding is not an LLM call in RUNS.md); `fake.embedding_requests` counts them.
A request with no scripted step left gets HTTP 500 and is listed in `fake.unscripted`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kit.truth import current


def text(content: str) -> dict[str, Any]:
    """A scripted assistant answer with no tool call."""
    return {"content": content}


def calls(*tool_calls: tuple[str, dict[str, Any]], content: str | None = None) -> dict[str, Any]:
    """A scripted assistant message with one or more (parallel) tool calls."""
    return {"tool_calls": list(tool_calls), "content": content}


def fail(status: int = 500, message: str = "upstream model overloaded") -> dict[str, Any]:
    """A scripted failed model call (HTTP error from the provider)."""
    return {"error": status, "message": message}


class ScriptedOpenAI:
    """Scripted /v1/chat/completions: one queue of steps per model id, loaded per run."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.call_seq = 0
        self.embedding_requests = 0
        self.unscripted: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    status, headers, payload = fake.embed(body)
                else:
                    status, headers, payload = fake.answer(body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> ScriptedOpenAI:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def load(self, script: dict[str, list[dict[str, Any]]]) -> None:
        """Replace the queues: {model id: [step, ...]}."""
        with self.lock:
            self.queues = {model: deque(steps) for model, steps in script.items()}

    def leftovers(self) -> dict[str, int]:
        """Steps loaded but never asked for, per model (a recorder treats these as a problem)."""
        with self.lock:
            return {model: len(q) for model, q in self.queues.items() if q}

    # -- answers -------------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        model = str(body.get("model", ""))
        with self.lock:
            queue = self.queues.get(model)
            step = queue.popleft() if queue else None
            self.call_seq += 1
            seq = self.call_seq
        messages = body.get("messages") or []
        prompt_tokens = 20 + len(json.dumps(messages)) // 16 + 8 * len(body.get("tools") or [])
        if step is None:
            self.unscripted.append(model)
            step = fail(500, f"no scripted answer left for model {model!r}")
        if "error" in step:
            current().llm_error()
            err = {"error": {"message": step["message"], "type": "server_error", "code": None}}
            return step["error"], {"Content-Type": "application/json"}, json.dumps(err).encode()

        tool_calls = [
            {
                "id": f"call_{seq:03d}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(step.get("tool_calls") or [])
        ]
        content = step.get("content")
        completion_tokens = 3 + len(content or "") // 4 + 12 * len(tool_calls)
        current().llm(input_tokens=prompt_tokens, output_tokens=completion_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        finish = "tool_calls" if tool_calls else "stop"
        ident = f"chatcmpl-{seq:04d}"
        created = int(time.time())
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            sse = _sse(ident, created, model, content, tool_calls, finish, usage, include_usage)
            return 200, {"Content-Type": "text/event-stream"}, sse
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        completion = {
            "id": ident,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(completion).encode()

    def embed(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        inputs = body.get("input")
        texts = inputs if isinstance(inputs, list) else [inputs]
        with self.lock:
            self.embedding_requests += 1
        tokens = sum(1 + len(str(t)) // 4 for t in texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [0.1 * (i + 1), 0.2, 0.3, 0.4]}
            for i, _ in enumerate(texts)
        ]
        answer = {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(answer).encode()


def _sse(
    ident: str,
    created: int,
    model: str,
    content: str | None,
    tool_calls: list[dict[str, Any]],
    finish: str,
    usage: dict[str, int],
    include_usage: bool,
) -> bytes:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
        data = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(data)}\n\n"

    out = [chunk([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])]
    if content:
        for i, word in enumerate(content.split(" ")):
            piece = word if i == 0 else " " + word
            out.append(chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
    for i, call in enumerate(tool_calls):
        delta = {"tool_calls": [{"index": i, **call}]}
        out.append(chunk([{"index": 0, "delta": delta, "finish_reason": None}]))
    out.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    if include_usage:
        out.append(chunk([], usage=usage))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()
