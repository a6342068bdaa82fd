"""Screening suites (SCREEN.md section 1): check every field of a suite file, then digest it.

A suite is refused whole, before anything is dispatched, with one SuiteError
that names the file, the task and the field, because a screening of half a
suite would be compared as if it were the whole. The digest is what says two
screenings ran the same suite, so it is computed from the checked values with
every default filled in, never from the file's text. Reading the three file
formats is `suite_files`; this module imports nothing of the collector's
server side.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from collector.screening.suite_fields import (
    Budget,
    SuiteError,
    Where,
    check_answer_key,
    check_grader,
    check_integer,
    check_json_value,
    check_name,
    check_timeout,
    kind_of,
    refuse_unknown,
)
from collector.screening.suite_files import read_suite_file

__all__ = ["Suite", "SuiteError", "Task", "canonical_json", "load_suite"]

SUITE_FIELDS: Final = (
    "name",
    "tasks",
    "rounds",
    "timeout_s",
    "max_tokens",
    "grader",
    "send_expected",
)
TASK_FIELDS: Final = (
    "id",
    "prompt",
    "expected_output",
    "grader",
    "max_tokens",
    "timeout_s",
    "metadata",
)
DEFAULT_ROUNDS: Final = 3
DEFAULT_TIMEOUT_S: Final = 60.0
DEFAULT_MAX_TOKENS: Final = 256
MAX_TASKS: Final = 10_000
MAX_ROUNDS: Final = 100
MAX_ID_CHARS: Final = 256
_SURROGATE: Final = "holds a lone surrogate, which is not Unicode text"


@dataclass(frozen=True, slots=True)
class Task:
    """One checked task with every default filled in; `grader` is the effective one."""

    id: str
    prompt: str
    grader: str
    max_tokens: int
    timeout_s: float
    has_expected: bool
    expected_output: object  # None when not given: check has_expected (null is a value)
    metadata: dict[str, object] | None
    index: int  # 0-based position in the suite


@dataclass(frozen=True, slots=True)
class Suite:
    """A checked suite; `rounds` is the file's own (a `--rounds` flag does not change it)."""

    name: str
    rounds: int
    timeout_s: float
    max_tokens: int
    send_expected: bool
    tasks: tuple[Task, ...]
    digest: str
    path: str


def load_suite(path: Path | str) -> Suite:
    """Read and check a .yaml/.yml/.json/.jsonl suite; SuiteError names what is wrong."""
    path = Path(path)
    file = str(path)
    document, lines = read_suite_file(path)
    where = Where(file)
    refuse_unknown(where, document, SUITE_FIELDS)
    name = check_name(where, document, path.stem)
    rounds = check_integer(where, document, "rounds", DEFAULT_ROUNDS, MAX_ROUNDS)
    timeout_s = check_timeout(where, document, DEFAULT_TIMEOUT_S)
    max_tokens = check_integer(where, document, "max_tokens", DEFAULT_MAX_TOKENS, None)
    grader = check_grader(where, document, None)
    send_expected = document.get("send_expected", False)
    if not isinstance(send_expected, bool):
        raise where.error("send_expected", f"expected true or false, got {kind_of(send_expected)}")
    if "tasks" not in document:
        raise where.error("tasks", "required field is missing")
    raw_tasks = document["tasks"]
    if not isinstance(raw_tasks, list):
        raise where.error("tasks", f"expected a list of tasks, got {kind_of(raw_tasks)}")
    if not 1 <= len(raw_tasks) <= MAX_TASKS:
        raise where.error("tasks", f"must hold 1..{MAX_TASKS:,} tasks, got {len(raw_tasks):,}")
    tasks: list[Task] = []
    first_use: dict[str, int] = {}
    budget = Budget()
    for index, raw in enumerate(raw_tasks):
        at = Where(file, index, line=lines[index] if lines else None)
        task = _task(at, index, raw, (grader, max_tokens, timeout_s), budget)
        if task.id in first_use:
            raise at.named(task.id).error(
                "id", f"duplicate id, first used by task {first_use[task.id] + 1}"
            )
        first_use[task.id] = index
        tasks.append(task)
    header = (name, rounds, timeout_s, max_tokens, send_expected)
    text = _canonical(*header, tasks)
    try:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        raise _lone_surrogate(file, tasks, lines) from None
    return Suite(*header, tuple(tasks), digest, file)


def canonical_json(suite: Suite) -> str:
    """The exact text whose UTF-8 SHA-256 is the suite's digest (SCREEN.md section 1)."""
    header = (suite.name, suite.rounds, suite.timeout_s, suite.max_tokens, suite.send_expected)
    return _canonical(*header, suite.tasks)


def _canonical(
    name: str,
    rounds: int,
    timeout_s: float,
    max_tokens: int,
    send: bool,
    tasks: list[Task] | tuple[Task, ...],
) -> str:
    suite = {
        "name": name,
        "rounds": rounds,
        "timeout_s": timeout_s,
        "max_tokens": max_tokens,
        "send_expected": send,
        "tasks": [_canonical_task(task) for task in tasks],
    }
    return json.dumps(suite, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical_task(task: Task) -> dict[str, object]:
    canonical: dict[str, object] = {
        "id": task.id,
        "prompt": task.prompt,
        "grader": task.grader,
        "max_tokens": task.max_tokens,
        "timeout_s": task.timeout_s,
    }
    if task.has_expected:
        canonical["expected_output"] = task.expected_output
    if task.metadata is not None:
        canonical["metadata"] = task.metadata
    return canonical


def _task(
    where: Where,
    index: int,
    raw: object,
    defaults: tuple[str | None, int, float],
    budget: Budget,
) -> Task:
    """One task, checked field by field in the order a person reads them; its answer
    key and metadata are measured before anything writes them out (`budget`)."""
    grader, max_tokens, timeout_s = defaults
    if not isinstance(raw, dict):
        raise where.error(None, f"expected a task object, got {kind_of(raw)}")
    task_id = raw.get("id")
    if isinstance(task_id, str) and 1 <= len(task_id) <= MAX_ID_CHARS:
        where = where.named(task_id)
    refuse_unknown(where, raw, TASK_FIELDS)
    if "id" not in raw:
        raise where.error("id", "required field is missing")
    if not isinstance(task_id, str):
        hint = " (quote it)" if isinstance(task_id, int | float) else ""  # YAML's `id: 7`
        raise where.error("id", f"expected a string, got {kind_of(task_id)}{hint}")
    if not where.task_id:
        raise where.error("id", f"must be 1..{MAX_ID_CHARS} characters, got {len(task_id)}")
    prompt = raw.get("prompt")
    if "prompt" not in raw:
        raise where.error("prompt", "required field is missing")
    if not isinstance(prompt, str):
        raise where.error("prompt", f"expected a string, got {kind_of(prompt)}")
    if not prompt:
        raise where.error("prompt", "must not be empty")
    has_expected = "expected_output" in raw
    # SCREEN.md section 2: the suite's grader, else fuzzy with an answer key, else completion.
    effective = check_grader(where, raw, grader) or ("fuzzy" if has_expected else "completion")
    expected = raw.get("expected_output")
    check_json_value(where, "expected_output", expected)
    budget.spend(where, "expected_output", expected)
    check_answer_key(where, effective, has_expected, expected)
    metadata = raw.get("metadata")
    if "metadata" in raw:
        if not isinstance(metadata, dict):
            raise where.error("metadata", f"expected an object, got {kind_of(metadata)}")
        check_json_value(where, "metadata", metadata)
        budget.spend(where, "metadata", metadata)
    return Task(
        id=task_id,
        prompt=prompt,
        grader=effective,
        max_tokens=check_integer(where, raw, "max_tokens", max_tokens, None),
        timeout_s=check_timeout(where, raw, timeout_s),
        has_expected=has_expected,
        expected_output=expected,
        metadata=metadata,
        index=index,
    )


def _lone_surrogate(file: str, tasks: list[Task], lines: list[int] | None) -> SuiteError:
    """Only reached on failure: find the task and field that cannot be UTF-8 (e.g. "\\ud800")."""
    for task in tasks:
        where = Where(file, task.index, task.id, lines[task.index] if lines else None)
        for field, value in _canonical_task(task).items():
            try:
                json.dumps(value, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                return where.error(field, _SURROGATE)
    return Where(file).error(None, _SURROGATE)  # pragma: no cover - a suite's name is ASCII
