"""Checking one field of a suite, and the SuiteError that names where it is wrong.

SCREEN.md section 1 lists the suite errors; each check here raises one with
the same shape ("<file>: task 3 (id 'refund'): field 'grader': <what>") so a
user can find the place from the message alone. Booleans are refused where
an integer or a number is due: Python counts True as 1, a suite does not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from scoring.graders import GRADERS, expected_text, parse_json

MAX_TIMEOUT_S: Final = 600.0
NAME: Final = re.compile(r"[A-Za-z0-9._-]{1,64}")


class SuiteError(Exception):
    """A suite that cannot be screened, naming the file, the task and the field.

    `task_index` is 0-based like `Task.index`; the message counts tasks from 1
    ("task 1" is the first), as a person reading the file does. `line` is
    known for JSON Lines tasks and parse errors, and follows the file name.
    """

    def __init__(
        self,
        file: str,
        message: str,
        *,
        task_index: int | None = None,
        task_id: str | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file = file
        self.task_index = task_index
        self.task_id = task_id
        self.field = field
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file if self.line is None else f"{self.file}:{self.line}"]
        if self.task_index is not None:
            named = f" (id {self.task_id!r})" if self.task_id is not None else ""
            parts.append(f"task {self.task_index + 1}{named}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        parts.append(self.message)
        return ": ".join(parts)


@dataclass(frozen=True, slots=True)
class Where:
    """Where in a suite a check is looking, so every error names the same place the same way."""

    file: str
    task_index: int | None = None
    task_id: str | None = None
    line: int | None = None

    def named(self, task_id: str) -> Where:
        return Where(self.file, self.task_index, task_id, self.line)

    def error(self, field: str | None, message: str) -> SuiteError:
        return SuiteError(
            self.file,
            message,
            task_index=self.task_index,
            task_id=self.task_id,
            field=field,
            line=self.line,
        )


def kind_of(value: object) -> str:
    """A value's kind in the words of JSON, for messages ("got a boolean")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return names.get(type(value), f"a {type(value).__name__}")


def check_answer_key(where: Where, grader: str, has_expected: bool, expected: object) -> None:
    """Refuse what would make every answer fail, or the grader crash, at dispatch time."""
    if grader != "completion" and not has_expected:
        raise where.error(
            "expected_output",
            f"required by grader {grader!r} (only 'completion' grades without one)",
        )
    if grader == "json" and isinstance(expected, str):
        try:
            parse_json(expected)
        except (ValueError, RecursionError) as exc:
            raise where.error(
                "expected_output",
                f"grader 'json' parses a string as JSON, and this one does not parse ({exc});"
                " to expect a JSON string, quote it",
            ) from None
    if grader == "regex":
        try:
            re.compile(expected_text(expected))
        except re.error as exc:
            raise where.error("expected_output", f"invalid regex: {exc}") from None


def refuse_unknown(where: Where, raw: Mapping[str, object], known: tuple[str, ...]) -> None:
    for field in raw:
        if field not in known:
            raise where.error(field, f"unknown field (fields: {', '.join(known)})")


def check_name(where: Where, document: Mapping[str, object], stem: str) -> str:
    if "name" not in document:
        if not NAME.fullmatch(stem):
            raise where.error(
                "name", f"not given, and the file's stem {stem!r} does not match {NAME.pattern}"
            )
        return stem
    name = document["name"]
    if not isinstance(name, str):
        raise where.error("name", f"expected a string, got {kind_of(name)}")
    if not NAME.fullmatch(name):
        raise where.error("name", f"must match {NAME.pattern}, got {name!r}")
    return name


def check_grader(where: Where, raw: Mapping[str, object], default: str | None) -> str | None:
    if "grader" not in raw:
        return default
    grader = raw["grader"]
    if not isinstance(grader, str):
        raise where.error("grader", f"expected a string, got {kind_of(grader)}")
    if grader not in GRADERS:
        raise where.error("grader", f"unknown grader {grader!r} (graders: {', '.join(GRADERS)})")
    return grader


def check_integer(
    where: Where, raw: Mapping[str, object], field: str, default: int, high: int | None
) -> int:
    if field not in raw:
        return default
    value = raw[field]
    if isinstance(value, bool) or not isinstance(value, int):  # True is an int to Python, not to us
        raise where.error(field, f"expected an integer, got {kind_of(value)}")
    if value < 1 or (high is not None and value > high):
        bounds = f"1..{high}" if high is not None else "at least 1"
        raise where.error(field, f"must be {bounds}, got {value}")
    return value


def check_timeout(where: Where, raw: Mapping[str, object], default: float) -> float:
    if "timeout_s" not in raw:
        return default
    value = raw["timeout_s"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error("timeout_s", f"expected a number of seconds, got {kind_of(value)}")
    if not 0 < value <= MAX_TIMEOUT_S:  # NaN fails this too
        raise where.error(
            "timeout_s", f"must be above 0 and at most {MAX_TIMEOUT_S:g}, got {value!r}"
        )
    return float(value)


def check_json_value(where: Where, field: str, value: object) -> None:
    """YAML can hold dates, sets, bytes, NaN, non-string keys and cycles; JSON cannot, nor a digest.

    Iterative, and each shared (aliased) container is checked once; a
    container inside itself is refused, as json.dumps would be.
    """
    if value is None or isinstance(value, str | int):
        return  # the common answer key, a string, needs no walk
    pending: list[tuple[object, bool]] = [(value, False)]
    inside: set[int] = set()
    done: set[int] = set()
    while pending:
        item, leaving = pending.pop()
        if leaving:
            inside.discard(id(item))
            done.add(id(item))
        elif isinstance(item, dict | list):
            if id(item) in inside:
                raise where.error(field, "holds itself (a YAML alias inside its own anchor)")
            if id(item) not in done:
                inside.add(id(item))
                pending.append((item, True))
                pending.extend((child, False) for child in _children(where, field, item))
        elif isinstance(item, float) and not math.isfinite(item):
            raise where.error(field, f"holds {item!r}, which is not a JSON number")
        elif item is not None and not isinstance(item, str | int | float):
            raise where.error(field, f"holds {kind_of(item)}, which is not a JSON value (quote it)")


def _children(where: Where, field: str, item: dict[object, object] | list[object]) -> list[object]:
    if isinstance(item, list):
        return item
    for key in item:
        if not isinstance(key, str):
            raise where.error(field, f"has an object key that is not a string: {key!r}")
    return list(item.values())
