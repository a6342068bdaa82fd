"""Checking one field of a suite, and the SuiteError that names where it is wrong.

SCREEN.md section 1 lists the suite errors; each check here raises one with
the same shape ("<file>: task 3 (id 'refund'): field 'grader': <what>") so a
user can find the place from the message alone. Booleans are refused where
an integer or a number is due: Python counts True as 1, a suite does not.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from scoring.graders import GRADERS, expected_text, parse_json

MAX_TIMEOUT_S: Final = 600.0
NAME: Final = re.compile(r"[A-Za-z0-9._-]{1,64}")
# What the answer keys and metadata of a whole suite may take written out, every
# YAML alias repeated where it is used: ~40x a 10,000-task suite of 3 MB
# (docs/screening.md "Loading"), and a bound on the digest's text. A 401-byte
# suite of nested aliases ("billion laughs") otherwise expanded to 1.57 GB
# in 40 s while its digest was computed (issue 37 item 10).
MAX_EXPANDED_BYTES: Final = 128 * 1024 * 1024
_LOG10_2: Final = 0.30103


@dataclass(frozen=True, slots=True)
class LongNumber:
    """An integer written with more digits than Python turns into a number
    (`sys.get_int_max_str_digits()`, 4,300 by default): read as this marker
    rather than raising from inside the parser, so the check of the field it
    sits in names the field (issue 37 item 13)."""

    digits: int


def number_or_long(text: str) -> int | LongNumber:
    """A JSON or YAML decimal integer, or the marker when it has too many digits."""
    try:
        return int(text)
    except ValueError:
        return LongNumber(sum(ch.isdigit() for ch in text))


def _digits(value: int) -> int:
    """About how many decimal digits an integer has, without writing it out."""
    return int(abs(value).bit_length() * _LOG10_2) + 1


def too_long(value: object) -> bool:
    """An integer that cannot be written out as decimal text (json.dumps would raise)."""
    if isinstance(value, LongNumber):
        return True
    limit = sys.get_int_max_str_digits()
    return isinstance(value, int) and limit > 0 and _digits(value) >= limit


def shown(value: object) -> str:
    """A value for a message: a huge integer by its length, not its 5,000 digits."""
    if isinstance(value, LongNumber):
        return f"a {value.digits}-digit number"
    if isinstance(value, int) and not isinstance(value, bool) and _digits(value) > 20:
        return f"a number of about {_digits(value)} digits"
    return repr(value)


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
    if isinstance(value, LongNumber):
        return f"a {value.digits}-digit number"
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
    bounds = f"1..{high}" if high is not None else "at least 1"
    if isinstance(value, LongNumber):
        raise where.error(field, f"must be {bounds}, got {shown(value)}")
    if isinstance(value, bool) or not isinstance(value, int):  # True is an int to Python, not to us
        raise where.error(field, f"expected an integer, got {kind_of(value)}")
    # A whole number must fit a run's 64-bit columns and the digest's text.
    if value < 1 or (high is not None and value > high) or too_long(value):
        raise where.error(field, f"must be {bounds}, got {shown(value)}")
    return value


def check_timeout(where: Where, raw: Mapping[str, object], default: float) -> float:
    if "timeout_s" not in raw:
        return default
    value = raw["timeout_s"]
    limits = f"must be above 0 and at most {MAX_TIMEOUT_S:g}"
    if isinstance(value, LongNumber):
        raise where.error("timeout_s", f"{limits}, got {shown(value)}")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error("timeout_s", f"expected a number of seconds, got {kind_of(value)}")
    if not 0 < value <= MAX_TIMEOUT_S:  # NaN fails this too
        raise where.error("timeout_s", f"{limits}, got {shown(value)}")
    return float(value)


def check_json_value(where: Where, field: str, value: object) -> None:
    """YAML can hold dates, sets, bytes, NaN, non-string keys and cycles; JSON cannot, nor a digest.

    Iterative, and each shared (aliased) container is checked once; a
    container inside itself is refused, as json.dumps would be.
    """
    if value is None or isinstance(value, str) or (isinstance(value, int) and not too_long(value)):
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
        elif too_long(item):
            raise where.error(
                field,
                f"holds {shown(item)}; a number can have at most "
                f"{sys.get_int_max_str_digits() - 1} digits here (write it as a string)",
            )
        elif item is not None and not isinstance(item, str | int | float):
            raise where.error(field, f"holds {kind_of(item)}, which is not a JSON value (quote it)")


def _children(where: Where, field: str, item: dict[object, object] | list[object]) -> list[object]:
    if isinstance(item, list):
        return item
    for key in item:
        if not isinstance(key, str):
            raise where.error(field, f"has an object key that is not a string: {key!r}")
    return list(item.values())


class Budget:
    """What is left of MAX_EXPANDED_BYTES for the suite's answer keys and metadata.

    Spent field by field in suite order, so the error names the task and the
    field where the suite passed the bound. Checked after check_json_value
    (no cycles) and before anything writes the value out as JSON.
    """

    def __init__(self, total: int = MAX_EXPANDED_BYTES) -> None:
        self.total = total
        self.left = total

    def spend(self, where: Where, field: str, value: object) -> None:
        size = expanded_size(value, self.left)
        if size > self.left:
            raise where.error(
                field,
                f"the suite's answer keys and metadata take more than {self.total:,} bytes "
                "written out (a YAML alias repeats its anchor's value each time it is used)",
            )
        self.left -= size


def expanded_size(value: object, cap: int) -> int:
    """About how many bytes `value` takes as JSON with every alias written out; a
    number above `cap` once it passes it. Linear in the distinct containers:
    each shared (aliased) one is measured once and counted each time it is used.
    Iterative, like check_json_value; expects no cycles."""
    if not isinstance(value, dict | list):
        return _scalar_size(value)
    sizes: dict[int, int] = {}
    pending: list[tuple[object, bool]] = [(value, False)]
    while pending:
        item, measured = pending.pop()
        key = id(item)
        if key in sizes or not isinstance(item, dict | list):
            continue
        children = list(item.values()) if isinstance(item, dict) else item
        if not measured:
            pending.append((item, True))
            pending.extend((c, False) for c in children if isinstance(c, dict | list))
            continue
        size = 2 + len(children)  # brackets and commas
        if isinstance(item, dict):
            size += sum(len(k) + 3 for k in item)  # quoted key and colon
        for child in children:
            size += sizes[id(child)] if isinstance(child, dict | list) else _scalar_size(child)
        if size > cap:
            return size
        sizes[key] = size
    return sizes[id(value)]


def _scalar_size(value: object) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return _digits(value)
    return 24  # a float's longest repr
