"""The tool calls an LLM span says the model requested (RUNS.md "Run fields",
`steps`, `steps_source`).

Some instrumentations emit no span for a tool call: the instrumentation of
the model client alone under a hand-written tool loop, Haystack's Agent
through OpenInference. What the model asked for is still on its LLM span, in
what came back: a run with no tool span takes those calls as its steps
(collector.assembly.runs). Read at ingest, on LLM spans only, into two facts:
how many calls, and their tool names.

Only the output side counts. The input side (`gen_ai.input.messages`,
`gen_ai.prompt.<i>.tool_calls.*`, `llm.input_messages.*`) repeats the calls
of every earlier turn in every later call, and would count each call again
at each later model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from collector.assembly import attributes as c

# `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name` (or
# `.id`), `gen_ai.completion.<i>.tool_calls.<j>.name` (or `.id`): one call per
# distinct (i, j), whichever of its keys are there.
_INDEXED = re.compile(
    r"(?:llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(function\.name|id)"
    r"|gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(name|id))"
)
_OPENINFERENCE, _OPENLLMETRY = c.REQUESTED_TAILS  # their markers
_INDEXED_PREFIXES = (f"{_OPENINFERENCE}.", f"{_OPENLLMETRY}.")
# A model's answer names a requested call as a part of this type; text that
# holds no such word has none, and is not parsed (most answers are text).
_TOOL_CALL = "tool_call"
_NEEDLE = f'"{_TOOL_CALL}"'
# Names kept per span: a model asks for a few calls at a time; a span that
# says it asked for more is counted in full, the rest unnamed.
MAX_NAMES = 256
_MAX_NAME_CHARS = 200


def requested_calls(attrs: Mapping[str, Any]) -> list[str] | None:
    """The tool names of the calls the span says the model requested, in
    order ("" where a call names none); None when it says nothing of them.

    `attrs` are as proto lifts them: a key under a content marker lifts the
    marker too (collector.ingest.decoding), so the indexed keys are looked
    for only on a span that has their marker."""
    messages = attrs.get(c.REQUESTED_MESSAGES_KEY)
    names = _message_parts(messages) if messages is not None else []
    if _OPENINFERENCE not in attrs and _OPENLLMETRY not in attrs:
        return names or None
    indexed: dict[tuple[int, int], str] = {}
    for key, value in attrs.items():
        if not key.startswith(_INDEXED_PREFIXES):
            continue
        found = _INDEXED.fullmatch(key)
        if found is None:
            continue
        groups = found.groups()
        i, j, field = (groups[0], groups[1], groups[2]) if groups[0] else groups[3:]
        call = (int(i), int(j))
        name = indexed.setdefault(call, "")
        if field.endswith("name") and not name:
            indexed[call] = _name(value)
    names = [indexed[call] for call in sorted(indexed)] + names
    return names or None


def _message_parts(messages: Any) -> list[str]:
    """`gen_ai.output.messages` (GenAI JSON: messages, each with `parts`):
    the names of its parts of type `tool_call`."""
    if isinstance(messages, str):
        if _NEEDLE not in messages:
            return []
        try:
            messages = json.loads(messages)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return []
    if not isinstance(messages, list):
        return []
    names: list[str] = []
    for message in messages:
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(parts, list):
            continue
        for part in parts:
            if isinstance(part, dict) and part.get("type") == _TOOL_CALL:
                names.append(_name(part.get("name")))
    return names


def _name(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()[:_MAX_NAME_CHARS]
