"""What a screening sends: its id, its rounds, and each dispatch's run key and body.

Built once per dispatch and shared by the targets and the recorder, so the
body the agent received and the `badge.request` event that records it are
the same text (SCREEN.md sections 3 and 4).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from collector.screening.suite import Suite, Task

SCREENING_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}\Z")  # SCREEN.md section 6
Todo = Mapping[str, frozenset[int]]  # task id -> the rounds still to dispatch (--resume)


@dataclass(frozen=True, slots=True)
class Screening:
    """One screening: who is screened, with which suite, how many rounds (`--rounds` wins)."""

    screening_id: str
    agent: str
    version: str | None
    suite: Suite
    rounds: int


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One task sent once: `payload` is the JSON object sent, `body` its text."""

    task: Task
    round: int  # 1-based
    run_key: str  # badge.run.id = <screening id>/<task id>/<round>
    payload: dict[str, object]
    body: str


def new_screening_id(now: datetime | None = None) -> str:
    """`<UTC YYYYMMDDTHHMMSSZ>-<6 hex>`: sortable by time, unlikely to collide in one second."""
    at = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{at:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def round_dispatches(
    screening: Screening, round_number: int, todo: Todo | None = None
) -> Iterator[Dispatch]:
    """A round's dispatches in suite order, built as they are taken (10,000 tasks stay lazy);
    with `todo`, only the tasks it names for this round (a resumed screening)."""
    send_expected = screening.suite.send_expected
    for task in screening.suite.tasks:
        if todo is not None and round_number not in todo.get(task.id, ()):
            continue
        payload: dict[str, object] = {
            "task_id": task.id,
            "prompt": task.prompt,
            "max_tokens": task.max_tokens,
        }
        if task.metadata is not None:
            payload["metadata"] = task.metadata
        if send_expected and task.has_expected:
            payload["expected_output"] = task.expected_output
        yield Dispatch(
            task=task,
            round=round_number,
            run_key=f"{screening.screening_id}/{task.id}/{round_number}",
            payload=payload,
            body=json.dumps(payload, ensure_ascii=False),
        )


def todo_count(screening: Screening, todo: Todo | None) -> int:
    """How many dispatches a screening (or what is left of it) makes."""
    if todo is None:
        return len(screening.suite.tasks) * screening.rounds
    return sum(len(rounds) for rounds in todo.values())
