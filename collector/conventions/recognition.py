"""What recognition says of one span: one record, stored with the span.

`Recognition` is the whole result: the role, the convention and rule that
decided it (or the family that knows the span, or nothing), and the values
that role needs (a tool's name and call id, a model, tokens, cost) read from
the places that convention gives. Its `label` is what the spans table keeps
in its `rule` column; `RuleLabel.parse` reads a stored label back.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

TOOL, LLM, AGENT, OTHER = "tool", "llm", "agent", "other"
NOT_A_STEP = "not_a_step"  # a rule list, not a role: such a span is a tool that is no step
UNRECOGNISED = "unrecognised"  # the label of a span no convention knows (section 4)
KNOWN = "applies_to"  # the label's tail for a span a family knows but no rule of it matched


class Recognition(NamedTuple):
    """One span's recognition: built once per span at ingest (a NamedTuple,
    one C call), and a pure function of the span (name, kind, status, scope,
    attributes, resource) and the active conventions."""

    role: str  # tool, llm, agent or other
    convention: str = ""  # the convention whose rule decided; "" when none did
    rule_role: str = ""  # not_a_step, tool, llm or agent; "" when no rule matched
    rule_index: int = -1  # 0-based within its list
    known_by: str = ""  # an `other` span: the first convention whose explicit applies_to held
    tool_name: Any = None  # tool and not_a_step rules
    call_id: Any = None
    model: Any = None  # llm rules
    input_tokens: Any = None  # llm: the call's usage; agent and other: run totals
    output_tokens: Any = None
    cost_usd: Any = None  # llm rules

    @property
    def counted(self) -> bool:
        """False for a `not_a_step` tool: shown as a tool, never a step."""
        return self.rule_role != NOT_A_STEP

    @property
    def label(self) -> str:
        """`genai:tool[0]`, `openinference:applies_to`, or `unrecognised`."""
        if self.rule_role:
            return f"{self.convention}:{self.rule_role}[{self.rule_index}]"
        if self.known_by:
            return f"{self.known_by}:{KNOWN}"
        return UNRECOGNISED


_LABEL = re.compile(
    r"(?P<convention>[a-z0-9][a-z0-9._-]{0,63}):"
    r"(?:(?P<role>not_a_step|tool|llm|agent)\[(?P<index>\d+)\]|" + KNOWN + ")"
)


class RuleLabel(NamedTuple):
    """A stored `rule` read back: which convention and rule decided, or
    whether the span was unrecognised. Spans stored before conventions
    (their rule a description such as `gen_ai.operation.name=chat`) parse
    as neither: `legacy`."""

    convention: str | None
    rule_role: str | None
    rule_index: int | None
    unrecognised: bool
    legacy: bool

    @classmethod
    def parse(cls, text: str) -> RuleLabel:
        if text == UNRECOGNISED:
            return cls(None, None, None, True, False)
        found = _LABEL.fullmatch(text)
        if found is None:
            return cls(None, None, None, False, True)
        index = found.group("index")
        return cls(
            found.group("convention"),
            found.group("role"),
            int(index) if index is not None else None,
            False,
            False,
        )
