"""Dispatch to a Python callable (SCREEN.md section 3): `module.path:callable`, sync or async.

The callable runs inside the root span's context, so the spans it starts
through the global tracer provider are the root's descendants and join the
run. A sync callable runs in a thread of its own (a daemon): a callable
that never returns costs one idle thread, not a worker the next dispatch
needs, and past `timeout_s` its result is ignored. Whatever the callable
raises, `SystemExit` included, is a recorded `exception` run, never a crash.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span

from collector.screening.answers import Answer, failed, raised, read_result
from collector.screening.plan import Dispatch


class TargetError(Exception):
    """The target cannot be loaded: a usage error, found before anything is dispatched."""


def load_callable(spec: str) -> Callable[..., Any]:
    """Import `module.path:callable` with the current directory on sys.path."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise TargetError(f"--target {spec!r}: expected module.path:callable")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's module failed to import: say why, exit 2
        raise TargetError(f"--target {spec!r}: cannot import {module_name}: {exc!r}") from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise TargetError(f"--target {spec!r}: {module_name} has no {attribute}") from None
    if not callable(found):
        raise TargetError(f"--target {spec!r}: {attribute} is not callable")
    return found  # type: ignore[no-any-return]


def _is_async(function: Callable[..., Any]) -> bool:
    call = getattr(function, "__call__", None)  # noqa: B004 - an object with async __call__
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)


class PythonTarget:
    """A callable called as `callable(prompt, task_id=..., max_tokens=..., metadata=...)`."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self._async = _is_async(function)

    async def close(self) -> None:
        """Nothing held: threads of calls still running are daemons, ignored at exit."""

    async def dispatch(self, dispatch: Dispatch, root: Span) -> Answer:
        """Call it in the root's context; past the timeout the call is abandoned."""
        with trace.use_span(root, end_on_exit=False):  # the task copies this context
            call = asyncio.ensure_future(self._answer(dispatch))
        limit = dispatch.task.timeout_s
        done, _ = await asyncio.wait({call}, timeout=limit)
        if not done:
            call.cancel()
            return failed("timeout", f"no answer within {limit:g} s")
        return call.result()

    async def _answer(self, dispatch: Dispatch) -> Answer:
        task = dispatch.task
        kwargs: dict[str, Any] = {
            "task_id": task.id,
            "max_tokens": task.max_tokens,
            "metadata": task.metadata,
        }
        if "expected_output" in dispatch.payload:  # send_expected: as for an endpoint
            kwargs["expected_output"] = task.expected_output
        try:
            if self._async:
                value = self.function(task.prompt, **kwargs)
            else:
                value = await _in_thread(self.function, task.prompt, kwargs)
            if inspect.isawaitable(value):
                value = await value
        except (Exception, SystemExit) as exc:
            return raised(exc)
        return read_result(value)


async def _in_thread(function: Callable[..., Any], prompt: str, kwargs: dict[str, Any]) -> Any:
    """Run a sync callable in a daemon thread, in this task's context (the root is current)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.cancelled():  # timed out: the result is ignored
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def run() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(function, prompt, **kwargs))
        except BaseException as exc:  # noqa: B036 - handed to the awaiting task as is
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the screening has ended and its loop is closed
            pass

    threading.Thread(target=run, name="screen-target", daemon=True).start()
    return await future
