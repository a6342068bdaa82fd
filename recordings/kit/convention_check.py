"""Check a draft convention file (CONVENTIONS.md sections 1-3) against a recording.

    python -m kit.convention_check CONVENTION.yaml RECORDING_DIR [--spans]
        [--also OTHER.yaml ...] [--requested]

Classifies every span of the recording with that one convention file, counts each run the way
RUNS.md does once roles are known (tool steps without `not_a_step` spans and nested duplicates;
LLM calls without LLM spans nested in an LLM span; tokens summed over the counted LLM calls,
else the outermost agent/root span's totals) and compares with expected.json (steps =
tool_calls, llm_calls, input_tokens, output_tokens). Exit 0 when every run matches.

`--also FILE` (repeatable) adds more convention files, tried after the first in the order given
(CONVENTIONS.md section 4: the first rule that matches, walking the files in order, decides);
`kit/standins/` has stand-ins for built-in families (GenAI, OpenInference) written from RUNS.md's
attribute lists, for checking a recording that needs them beside a draft. `--requested` applies
the engine rule of RUNS.md "Run fields" `steps_source`: a run with no tool span gets as steps the
tool calls its counted LLM calls requested (OpenInference
`llm.output_messages.<i>.message.tool_calls.<j>.*`, GenAI `gen_ai.output.messages` parts of type
`tool_call`, OpenLLMetry `gen_ai.completion.<i>.tool_calls.<j>.*`).

This is a recorder's aid for drafting convention files, NOT the collector's engine: it reads
only what the draft files here use, follows the spec's wording where the engine may be more
precise, and knows nothing of the other built-in families. Needs PyYAML (`pip install pyyaml`).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from kit.finish import Span, load_payloads, spans_of, unique

ROLES = ("not_a_step", "tool", "llm", "agent")  # CONVENTIONS.md section 1: order tried
ROOT_NAME = "badge.run"


def normalised(value: Any) -> Any:
    """CONVENTIONS.md section 2: a JSON string literal is unquoted once; strings stripped."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            try:
                decoded = json.loads(text)
            except ValueError:
                decoded = None
            if isinstance(decoded, str):
                text = decoded.strip()
        return text
    return value


def same(value: Any, wanted: Any) -> bool:
    value = normalised(value)
    if isinstance(wanted, bool) or isinstance(value, bool):
        return str(value).lower() == str(wanted).lower()
    if isinstance(wanted, int | float):
        try:
            return float(value) == float(wanted)
        except (TypeError, ValueError):
            return False
    return str(value).lower() == str(wanted).strip().lower()


def holds(cond: dict[str, Any], span: Span) -> bool:
    for key, arg in cond.items():
        if key in ("equals", "in", "matches"):
            continue
        if key in ("attr", "resource"):
            found = span.attrs if key == "attr" else span.resource
            if arg not in found:
                return False
            value = found[arg]
            if "equals" in cond and not same(value, cond["equals"]):
                return False
            if "in" in cond and not any(same(value, v) for v in cond["in"]):
                return False
            if "matches" in cond and not re.search(cond["matches"], str(normalised(value))):
                return False
        elif key == "scope":
            globs = arg if isinstance(arg, list) else [arg]
            if not any(fnmatch.fnmatchcase(span.scope, g) for g in globs):
                return False
        elif key == "name":
            if not re.search(arg, span.name):
                return False
        elif key == "kind":
            if span.kind not in (arg if isinstance(arg, list) else [arg]):
                return False
        elif key == "status":
            if span.status != arg:
                return False
        elif key == "any":
            if not any(holds(c, span) for c in arg):
                return False
        elif key == "all":
            if not all(holds(c, span) for c in arg):
                return False
        elif key == "not":
            if holds(arg, span):
                return False
        else:
            raise ValueError(f"unknown condition {key!r}")
    return True


def source(items: list[dict[str, Any]] | None, span: Span) -> Any:
    """CONVENTIONS.md section 3: the first item that yields a value."""
    for item in items or []:
        if "attr" in item and item["attr"] in span.attrs:
            value = span.attrs[item["attr"]]
            if "json" not in item:
                return normalised(value)
            try:
                node = json.loads(value) if isinstance(value, str) else value
            except ValueError:
                continue
            for part in str(item["json"]).split("."):
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                else:
                    node = None
                    break
            if node is not None:
                return node
        elif "name" in item:
            match = re.search(item["name"], span.name)
            if match and match.groups():
                return match.group(1)
        elif "resource" in item and item["resource"] in span.resource:
            return normalised(span.resource[item["resource"]])
    return None


# CONVENTIONS.md section 3: where a rule gives no tool_name / call_id / model, or a file no
# usage field, the built-in GenAI keys of RUNS.md apply (the collector's defaults).
DEFAULTS: dict[str, list[dict[str, Any]]] = {
    "tool_name": [
        {"attr": k} for k in ("gen_ai.tool.name", "tool.name", "mcp.tool.name", "ai.toolCall.name")
    ],
    "call_id": [{"attr": k} for k in ("gen_ai.tool.call.id", "tool.id", "ai.toolCall.id")],
    "model": [
        {"attr": k} for k in ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
    ],
    "input_tokens": [
        {"attr": k}
        for k in (
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        )
    ],
    "output_tokens": [
        {"attr": k}
        for k in (
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        )
    ],
    "cost_usd": [
        {"attr": k}
        for k in (
            "gen_ai.usage.cost",
            "gen_ai.usage.cost.amount",
            "llm.cost.total",
            "operation.cost",
        )
    ],
}


def given(mapping: dict[str, Any] | None, field: str) -> list[dict[str, Any]]:
    """A rule's or a usage's source for `field`, else the built-in GenAI keys."""
    found = (mapping or {}).get(field)
    return found if found else DEFAULTS[field]


def number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return found if found >= 0 else None


def classify(conv: dict[str, Any], span: Span) -> tuple[str, dict[str, Any] | None]:
    if "applies_to" in conv and not holds(conv["applies_to"], span):
        return "other", None
    for role in ROLES:
        for rule in conv.get(role) or []:
            if holds(rule["when"], span):
                return role, rule
    return "other", None


def classify_all(
    convs: list[dict[str, Any]], span: Span
) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """CONVENTIONS.md section 4: the conventions in order; the first whose rule matches decides."""
    for conv in convs:
        role, rule = classify(conv, span)
        if rule is not None:
            return role, rule, conv
    return "other", None, convs[0]


OPENINFERENCE_REQUESTED = re.compile(r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.")
OPENLLMETRY_REQUESTED = re.compile(r"^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.")


def requested_calls(span: Span) -> int:
    """The tool calls an LLM span says the model requested (RUNS.md "Run fields", steps_source)."""
    found = {
        (pattern.pattern, m.group(1), m.group(2))
        for key in span.attrs
        for pattern in (OPENINFERENCE_REQUESTED, OPENLLMETRY_REQUESTED)
        if (m := pattern.match(key))
    }
    messages = span.attrs.get("gen_ai.output.messages")
    try:
        parsed = json.loads(messages) if isinstance(messages, str) else messages
    except ValueError:
        parsed = None
    parts = [
        part
        for message in (parsed if isinstance(parsed, list) else [])
        if isinstance(message, dict)
        for part in (message.get("parts") or [])
        if isinstance(part, dict) and part.get("type") == "tool_call"
    ]
    return len(found) + len(parts)


ANSWER_PREFIXES = (
    "gen_ai.usage.",
    "llm.token_count.",
    "gen_ai.output.messages",
    "gen_ai.completion",
    "llm.output_messages",
    "ai.response",
)
REQUEST_PREFIXES = (
    "gen_ai.input.messages",
    "gen_ai.prompt",
    "gen_ai.system_instructions",
    "llm.input_messages",
    "llm.prompts",
    "ai.prompt",
)


def answered_apart(llm_spans: list[Span], carries_usage: Any, model_of: Any) -> set[str]:
    """The collector's engine rule (docs/runs.md "LLM calls that are no call"): an LLM span
    that reports what was sent but no usage and no answer, did not fail, and is followed by
    a sibling LLM span of the same model that reports the answer, is the request half of one
    call (Pydantic Logfire's streamed calls): the ids of such request spans."""
    by_parent: dict[str, list[Span]] = defaultdict(list)
    for span in llm_spans:
        by_parent[span.parent_span_id].append(span)
    paired: set[str] = set()
    for siblings in by_parent.values():
        waiting: list[Span] = []
        for span in sorted(siblings, key=lambda s: (s.start, s.span_id)):
            answer = carries_usage(span) or any(k.startswith(ANSWER_PREFIXES) for k in span.attrs)
            if not answer:
                if span.status != "ERROR" and any(
                    k.startswith(REQUEST_PREFIXES) for k in span.attrs
                ):
                    waiting.append(span)
                continue
            for index, request in enumerate(waiting):
                mine, theirs = model_of(span), model_of(request)
                if mine is None or theirs is None or mine == theirs:
                    paired.add(request.span_id)
                    del waiting[index]
                    break
    return paired


def prepared(llm_spans: list[Span], carries_usage: Any, model_of: Any) -> set[str]:
    """The collector's engine rule (docs/runs.md "LLM calls that are no call"): an LLM span
    with no usage, cost or messages at all, not failed, beside a sibling LLM span of the same
    model (or one naming none) that has them, prepares the request (llama-index)."""
    markers = ANSWER_PREFIXES + REQUEST_PREFIXES

    def says(span: Span) -> bool:
        return carries_usage(span) or any(k.startswith(markers) for k in span.attrs)

    found: set[str] = set()
    for span in llm_spans:
        if span.status == "ERROR" or says(span):
            continue
        model = model_of(span)
        if any(
            other is not span
            and other.parent_span_id == span.parent_span_id
            and says(other)
            and (model is None or model_of(other) in (None, model))
            for other in llm_spans
        ):
            found.add(span.span_id)
    return found


_NOT_A_NAME = re.compile(r"[^0-9a-z]+")
HANDOFF_PREFIXES = ("transfer_to_", "transfer_back_to_", "handoff_to_")


def agent_key(name: str) -> str:
    return _NOT_A_NAME.sub("_", name.lower()).strip("_")


def handoff(span: Span, tool: Any, agents: set[str]) -> bool:
    """The collector's engine rule (docs/runs.md "Not a step"): a tool named
    transfer_to_<agent> (transfer_back_to_, handoff_to_) for an agent of the trace, with or
    without a namespace, or whose gen_ai.tool.type says transfer or handoff."""
    kind = str(span.attrs.get("gen_ai.tool.type") or "").lower()
    if "transfer" in kind or "handoff" in kind:
        return True
    if tool is None:
        return False
    text = str(tool).strip().lower()
    bare = {text} | {text.rsplit(sep, 1)[1] for sep in ("-", ".", "__", ":", "/") if sep in text}
    return any(
        b.startswith(prefix) and agent_key(b[len(prefix) :]) in agents
        for b in bare
        for prefix in HANDOFF_PREFIXES
    )


def count_run(
    conv: dict[str, Any] | list[dict[str, Any]],
    spans: list[Span],
    requested: bool = False,
    engine: bool = False,
) -> dict[str, Any]:
    convs = conv if isinstance(conv, list) else [conv]
    by_id = {s.span_id: s for s in spans}
    decided = {s.span_id: classify_all(convs, s) for s in spans}
    roles = {k: (role, rule) for k, (role, rule, _) in decided.items()}

    def tool_identity(span: Span) -> tuple[Any, Any]:
        rule = roles[span.span_id][1] or {}
        return source(given(rule, "call_id"), span), source(given(rule, "tool_name"), span)

    def nearest(span: Span, wanted: str) -> Span | None:
        parent = by_id.get(span.parent_span_id)
        while parent is not None:
            if roles[parent.span_id][0] in wanted.split("|"):
                return parent
            parent = by_id.get(parent.parent_span_id)
        return None

    agents: set[str] = set()
    if engine:
        for span in spans:
            if roles[span.span_id][0] != "agent":
                continue
            name = span.attrs.get("gen_ai.agent.name") or span.attrs.get("agent.name")
            if name is None and span.name.startswith("invoke_agent "):
                name = span.name[len("invoke_agent ") :]
            if name:
                agents.add(agent_key(str(name)))
    steps = 0
    for span in spans:
        role = roles[span.span_id][0]
        if role != "tool":
            continue
        if engine and handoff(span, tool_identity(span)[1], agents):
            continue
        above = nearest(span, "tool|not_a_step")
        if above is not None:
            mine, theirs = tool_identity(span), tool_identity(above)
            # RUNS.md: the nearest tool ancestor is the same call (same call id, or the same
            # tool name with nothing but non-tool spans between): a nested duplicate
            if (mine[0] and mine[0] == theirs[0]) or (mine[1] and mine[1] == theirs[1]):
                continue
        steps += 1
    llm_spans = [s for s in spans if roles[s.span_id][0] == "llm" and nearest(s, "llm") is None]
    if engine:

        def carries_usage(span: Span) -> bool:
            usage = decided[span.span_id][2].get("usage") or {}
            return any(
                number(source(given(usage, k), span)) is not None
                for k in ("input_tokens", "output_tokens", "cost_usd")
            )

        def model_of(span: Span) -> Any:
            return source(given(roles[span.span_id][1], "model"), span)

        apart = answered_apart(llm_spans, carries_usage, model_of)
        apart |= prepared(llm_spans, carries_usage, model_of)
        llm_spans = [s for s in llm_spans if s.span_id not in apart]
    steps_source = "spans"
    if (requested or engine) and not any(
        role in ("tool", "not_a_step") for role, _ in roles.values()
    ):
        steps = sum(requested_calls(s) for s in llm_spans)
        steps_source = "requested"
    tokens = {"input_tokens": 0, "output_tokens": 0}
    cost, carried = 0.0, False
    for span in llm_spans:
        usage = decided[span.span_id][2].get("usage") or {}
        for key in tokens:
            value = number(source(given(usage, key), span))
            if value is not None:
                tokens[key] += int(value)
                carried = True
        value = number(source(given(usage, "cost_usd"), span))
        if value is not None:
            cost += value
    if not carried:  # run totals: the outermost agent/root span that carries them
        totals = [s for s in spans if roles[s.span_id][0] == "agent" or s.name == ROOT_NAME]
        for span in sorted(totals, key=lambda s: s.start):
            usage = decided[span.span_id][2].get("usage") or {}
            found = {k: number(source(given(usage, k), span)) for k in tokens}
            if any(v is not None for v in found.values()):
                tokens = {k: int(v or 0) for k, v in found.items()}
                break
    return {
        "steps": steps,
        "steps_source": steps_source,
        "llm_calls": len(llm_spans),
        **tokens,
        "cost_usd": cost,
        "roles": roles,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.convention_check", description=__doc__)
    parser.add_argument("convention", type=Path)
    parser.add_argument("recording", type=Path)
    parser.add_argument("--spans", action="store_true", help="print each span's role and rule")
    parser.add_argument(
        "--also", type=Path, action="append", default=[], help="more convention files, in order"
    )
    parser.add_argument(
        "--requested",
        action="store_true",
        help="a run with no tool span counts the tool calls its LLM calls requested",
    )
    parser.add_argument(
        "--engine",
        action="store_true",
        help="the collector's engine rules the checker knows besides the files: --requested, "
        "handoffs named for an agent of the trace, LLM spans that prepare a request or whose "
        "answer a sibling reports",
    )
    args = parser.parse_args(argv)
    convs = [yaml.safe_load(path.read_text()) for path in [args.convention, *args.also]]
    expected = json.loads((args.recording / "expected.json").read_text())
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in unique(spans_of(load_payloads(args.recording))):
        traces[span.trace_id].append(span)
    wrong = 0
    for trace_id, want in expected["runs"].items():
        got = count_run(
            convs, traces.get(trace_id, []), requested=args.requested, engine=args.engine
        )
        pairs = {
            "steps": (got["steps"], want["tool_calls"]),
            "llm_calls": (got["llm_calls"], want["llm_calls"]),
            "input_tokens": (got["input_tokens"], want["input_tokens"]),
            "output_tokens": (got["output_tokens"], want["output_tokens"]),
        }
        bad = {k: v for k, v in pairs.items() if v[0] != v[1]}
        wrong += bool(bad)
        label = "ok   " if not bad else "WRONG"
        detail = ", ".join(f"{k} {g} (truth {t})" for k, (g, t) in bad.items())
        steps = f"{got['steps']}" + (" (requested)" if got["steps_source"] == "requested" else "")
        print(
            f"{label} run {want['run_index']:>2} {want['task_id']:<28} steps {steps} "
            f"llm {got['llm_calls']} tokens {got['input_tokens']}/{got['output_tokens']} "
            f"cost {got['cost_usd']:.8f} {detail}"
        )
        if args.spans:
            for span in sorted(traces.get(trace_id, []), key=lambda s: s.start):
                role, rule = got["roles"][span.span_id]
                owner = next((c for c in convs if rule in (c.get(role) or [])), None)
                index = "" if owner is None else f"[{(owner.get(role) or []).index(rule)}]"
                name = "" if owner is None or len(convs) == 1 else f" {owner['convention']}"
                print(f"      {role}{index:<4} {span.name} ({span.scope}){name}")
    total = len(expected["runs"])
    files = ", ".join(str(p) for p in [args.convention, *args.also])
    extra = " and the requested-calls rule" if args.requested else ""
    extra = " and the engine rules" if args.engine else extra
    print(f"{total - wrong} of {total} runs right with {files}{extra}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
