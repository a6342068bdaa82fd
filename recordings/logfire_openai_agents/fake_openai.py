"""A scripted OpenAI-compatible server on 127.0.0.1: Chat Completions and the Responses API.

One queue of scripted answers per model id, loaded per run. An answer is text, one or more
tool calls in one message (parallel tool calls), or an HTTP error. Chat Completions answer as
SSE chunks with usage in the last chunk when `stream: true` is asked (as OpenAI does with
`stream_options.include_usage`); the Responses API answers non-streamed. Usage is derived from
the request size and the answer, returned in the provider's own `usage` object, and counted as
ground truth (`current().llm(...)`) per request that reaches the server; a scripted HTTP error is
`current().llm_error()`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kit import current


def text(content: str) -> dict[str, Any]:
    """A scripted assistant answer with no tool call."""
    return {"content": content}


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted assistant message with one or more (parallel) tool calls."""
    return {"tool_calls": list(tool_calls)}


def fail(status: int = 500, message: str = "upstream model overloaded") -> dict[str, Any]:
    """A scripted failed model call (HTTP error from the provider)."""
    return {"error": status, "message": message}


class FakeOpenAI:
    """Scripted /v1/chat/completions and /v1/responses: one queue of answers per model id."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.call_seq = 0
        self.unscripted: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, headers, payload = fake.answer(self.path, body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()

    def load(self, script: dict[str, list[dict[str, Any]]]) -> None:
        with self.lock:
            self.queues = {model: deque(steps) for model, steps in script.items()}

    def leftovers(self) -> dict[str, int]:
        with self.lock:
            return {model: len(q) for model, q in self.queues.items() if q}

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        model = str(body.get("model", ""))
        with self.lock:
            queue = self.queues.get(model)
            step = queue.popleft() if queue else None
            self.call_seq += 1
            seq = self.call_seq
        history = body.get("messages") if path.endswith("/chat/completions") else body.get("input")
        # Usage as a provider reports it: derived from the request size (prompt) and the answer.
        prompt_tokens = (
            20
            + len(json.dumps(history or [])) // 16
            + len(str(body.get("instructions") or "")) // 16
            + 8 * len(body.get("tools") or [])
        )
        if step is None:
            self.unscripted.append(model)
            step = fail(500, f"no scripted answer left for model {model!r}")
        if "error" in step:
            current().llm_error()
            err = {"error": {"message": step["message"], "type": "server_error", "code": None}}
            return step["error"], {"Content-Type": "application/json"}, json.dumps(err).encode()
        tool_calls = [
            (f"call_{seq:03d}_{i}", name, json.dumps(args))
            for i, (name, args) in enumerate(step.get("tool_calls", []))
        ]
        content = step.get("content")
        completion_tokens = 3 + len(content or "") // 4 + 12 * len(tool_calls)
        current().llm(input_tokens=prompt_tokens, output_tokens=completion_tokens)
        if path.endswith("/responses"):
            return self._response(seq, model, content, tool_calls, prompt_tokens, completion_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        finish = "tool_calls" if tool_calls else "stop"
        ident = f"chatcmpl-{seq:04d}"
        created = int(time.time())
        wire_calls = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in tool_calls
        ]
        if body.get("stream"):
            sse = self._sse(ident, created, model, content, wire_calls, finish, usage)
            return 200, {"Content-Type": "text/event-stream"}, sse
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if wire_calls:
            message["tool_calls"] = wire_calls
        completion = {
            "id": ident,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(completion).encode()

    @staticmethod
    def _response(
        seq: int,
        model: str,
        content: str | None,
        tool_calls: list[tuple[str, str, str]],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> tuple[int, dict[str, str], bytes]:
        output: list[dict[str, Any]] = [
            {
                "type": "function_call",
                "id": f"fc_{seq:03d}_{i}",
                "call_id": cid,
                "name": name,
                "arguments": args,
                "status": "completed",
            }
            for i, (cid, name, args) in enumerate(tool_calls)
        ]
        if content:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{seq:04d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": content, "annotations": []}],
                }
            )
        response = {
            "id": f"resp_{seq:04d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(response).encode()

    @staticmethod
    def _sse(
        ident: str,
        created: int,
        model: str,
        content: str | None,
        tool_calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, int],
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
                out.append(
                    chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
                )
        for i, call in enumerate(tool_calls):
            delta = {"tool_calls": [{"index": i, **call}]}
            out.append(chunk([{"index": 0, "delta": delta, "finish_reason": None}]))
        out.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
        out.append(chunk([], usage=usage))
        out.append("data: [DONE]\n\n")
        return "".join(out).encode()
