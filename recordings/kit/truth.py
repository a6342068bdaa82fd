"""Ground truth counted in code: the run in progress and its counters.

`current()` is the run that `Recording.run(...)` has open (a module global, since runs are
sequential; it works from any thread). Tool bodies call `current().tool(name)` on entry and
`current().tool_error()` when they raise; the fake model calls `current().llm(...)` per model call
(`llm_error()` when the call fails); `current().handoff()` marks an agent-to-agent handoff.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Fields a run carries in expected.json that are counted in code (the rest is read from payloads).
TRUTH_FIELDS = (
    "run_index",
    "task_id",
    "service_name",
    "success",
    "outcome",
    "error",
    "output",
    "expected_output",
    "tool_calls",
    "tool_errors",
    "tool_calls_by_name",
    "llm_calls",
    "llm_errors",
    "input_tokens",
    "output_tokens",
    "handoffs",
    "notes",
)


@dataclass
class Run:
    """One run's ground truth. Counters are thread-safe."""

    task_id: str
    run_index: int = 0
    service_name: str = ""
    expected_output: Any = None
    output: Any = None
    success: bool = False
    outcome: str = ""  # "ok" | "wrong_answer" | "exception"; set by Recording.run on exit
    error: str | None = None
    notes: str = ""
    tool_calls: int = 0
    tool_errors: int = 0
    tool_calls_by_name: Counter[str] = field(default_factory=Counter)
    llm_calls: int = 0
    llm_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    handoffs: int = 0
    trace_id: str = ""  # 32 hex, set by Recording.run
    root_span_id: str = ""  # 16 hex, set by Recording.run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def tool(self, name: str) -> None:
        """A tool body was entered (call at the very start of the tool function)."""
        with self._lock:
            self.tool_calls += 1
            self.tool_calls_by_name[name] += 1

    def tool_error(self) -> None:
        """The tool body that was entered is raising."""
        with self._lock:
            self.tool_errors += 1

    def llm(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """One model call made, with the usage the model side reports to the framework."""
        with self._lock:
            self.llm_calls += 1
            self.input_tokens += int(input_tokens)
            self.output_tokens += int(output_tokens)

    def llm_error(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """One model call made that failed (counted in llm_calls and llm_errors)."""
        with self._lock:
            self.llm_calls += 1
            self.llm_errors += 1
            self.input_tokens += int(input_tokens)
            self.output_tokens += int(output_tokens)

    def handoff(self) -> None:
        """One agent-to-agent handoff (not a tool step)."""
        with self._lock:
            self.handoffs += 1

    def truth(self) -> dict[str, Any]:
        """The code-counted fields, plus trace_id / root_span_id (the keys truth.json uses)."""
        out: dict[str, Any] = {
            "trace_id": self.trace_id,
            "root_span_id": self.root_span_id,
        }
        for name in TRUTH_FIELDS:
            value = getattr(self, name)
            if isinstance(value, Counter):
                value = dict(sorted(value.items()))
            out[name] = value
        return out


class _Stray(Run):
    """Counts made while no run is open: reported by finish, never part of a run."""

    def _warn(self, what: str) -> None:
        print(f"kit: current().{what} called outside a run", file=sys.stderr)

    def tool(self, name: str) -> None:
        self._warn(f"tool({name!r})")
        super().tool(name)

    def tool_error(self) -> None:
        self._warn("tool_error()")
        super().tool_error()

    def llm(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        self._warn("llm()")
        super().llm(input_tokens, output_tokens)

    def llm_error(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        self._warn("llm_error()")
        super().llm_error(input_tokens, output_tokens)

    def handoff(self) -> None:
        self._warn("handoff()")
        super().handoff()


STRAY = _Stray(task_id="(outside any run)")
_current: Run | None = None


def current() -> Run:
    """The run in progress; outside a run, a stray sink that warns on stderr."""
    return _current if _current is not None else STRAY


def _set_current(run: Run | None) -> None:
    global _current
    _current = run
