"""The Python target in-process: sync and async callables, timeouts, exceptions, the root's
context, and loading `module:callable` (the CLI tests run the same through a child process)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from collector.screening.plan import Screening, round_dispatches
from collector.screening.python_target import PythonTarget, TargetError, load_callable
from collector.screening.suite import load_suite


def dispatch(tmp_path: Path, timeout_s: float = 1.0, send_expected: bool = False) -> Any:
    path = tmp_path / "s.jsonl"
    path.write_text(
        f'{{"id": "t", "prompt": "hello", "expected_output": "x", "timeout_s": {timeout_s}}}\n'
    )
    suite = load_suite(path)
    if send_expected:
        from dataclasses import replace

        suite = replace(suite, send_expected=True)
    return next(round_dispatches(Screening("S", "bot", None, suite, 1), 1))


def call(target: PythonTarget, sent: Any) -> Any:
    tracer = TracerProvider().get_tracer("t")

    async def run() -> Any:
        root = tracer.start_span("badge.run")
        answer = await target.dispatch(sent, root)
        root.end()
        return answer, root

    return asyncio.run(run())


def test_a_sync_callable_runs_in_a_thread_inside_the_roots_context(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def agent(prompt: str, **kwargs: Any) -> dict[str, object]:
        seen.update(kwargs, prompt=prompt, span=trace.get_current_span())
        return {"output": prompt.upper(), "output_tokens": 2}

    answer, root = call(PythonTarget(agent), dispatch(tmp_path, send_expected=True))
    assert (answer.error_class, answer.output, answer.output_tokens) == ("none", "HELLO", 2)
    assert seen["span"] is root
    assert seen["task_id"] == "t" and seen["max_tokens"] == 256 and seen["metadata"] is None
    assert seen["expected_output"] == "x"


def test_an_async_callable_is_awaited_and_its_exception_recorded(tmp_path: Path) -> None:
    async def agent(prompt: str, **kwargs: Any) -> str:
        await asyncio.sleep(0)
        raise RuntimeError("model down")

    answer, _ = call(PythonTarget(agent), dispatch(tmp_path))
    assert (answer.error_class, answer.exception_type, answer.detail) == (
        "exception",
        "RuntimeError",
        "model down",
    )


@pytest.mark.timing
def test_past_the_timeout_the_call_is_abandoned(tmp_path: Path) -> None:
    # The agents take far longer than the bound below, which is far longer than
    # the 0.2 s timeout: a busy machine cannot make an abandoned call look awaited.
    def slow(prompt: str, **kwargs: Any) -> str:
        time.sleep(6)
        return "late"

    async def slower(prompt: str, **kwargs: Any) -> str:
        await asyncio.sleep(6)
        return "late"

    for agent in (slow, slower):
        started = time.monotonic()
        answer, _ = call(PythonTarget(agent), dispatch(tmp_path, timeout_s=0.2))
        assert answer.error_class == "timeout" and time.monotonic() - started < 3
        assert answer.detail == "no answer within 0.2 s"  # the task's own timeout


def test_a_callable_that_exits_or_returns_an_awaitable_is_still_an_answer(tmp_path: Path) -> None:
    def exits(prompt: str, **kwargs: Any) -> str:
        raise SystemExit(3)

    async def later() -> str:
        return "awaited"

    def returns_awaitable(prompt: str, **kwargs: Any) -> Any:
        return later()

    assert call(PythonTarget(exits), dispatch(tmp_path))[0].error_class == "exception"
    answer, _ = call(PythonTarget(returns_awaitable), dispatch(tmp_path))
    assert (answer.error_class, answer.output) == ("none", "awaited")


def test_loading_a_target_names_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_agent.py").write_text("def run(prompt, **kw):\n    return prompt\nvalue = 3\n")
    (tmp_path / "broken_agent.py").write_text("raise ImportError('no model')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert load_callable("my_agent:run")("x") == "x"
    for spec, message in {
        "my_agent": "expected module.path:callable",
        "my_agent:nope": "has no nope",
        "my_agent:value": "not callable",
        "broken_agent:run": "no model",
    }.items():
        with pytest.raises(TargetError, match=message):
            load_callable(spec)
