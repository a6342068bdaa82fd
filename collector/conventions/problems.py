"""What is wrong with a convention file, said where it is wrong.

Every load error is a `Problem`: the file, the line when YAML gives one, the
field (a path such as `tool[0].when.attr`) and a message. A file that fails
collects all its problems, so `conventions check` lists them at once and
`serve` names them before it opens a door (CONVENTIONS.md section 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Problem(NamedTuple):
    file: str
    line: int | None  # 1-based; None when YAML gave none (a file that cannot be read)
    field: str  # where in the file: `convention`, `tool[0].when.any[1].matches`, `yaml`
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field}: {self.message}"


class ConventionError(Exception):
    """One or more convention files did not load."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class Report:
    """Problems of one file as they are found; loading goes on after one, so a
    file's every problem is reported at once."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def add(self, line: int | None, field: str, message: str) -> None:
        self.problems.append(Problem(self.file, line, field, message))
