"""Print the span tree of recorded traces (for diagnosing a run at span level).

    python -m kit.dump DIR [--trace PREFIX] [--run N] [--attrs] [--all-attrs]

DIR is a recording folder (payloads/, and expected.json for --run). One line per span:
name, kind, role (by attributes), status, duration, seq of the request it came in; --attrs adds
the identifying attributes (gen_ai.*, openinference.*, traceloop.*, tool / model / usage keys),
--all-attrs every attribute (values cut at 120 characters).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from kit.finish import Span, load_payloads, spans_of, unique
from kit.roles import role

KEY_PREFIXES = (
    "gen_ai.",
    "openinference.",
    "traceloop.",
    "langsmith.",
    "langfuse.",
    "llm.",
    "tool.",
    "badge.",
    "error.",
)
SKIP_KEYS = ("messages", "definitions", "system_instructions", "input_messages", "output_messages")


def _show(value: object, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "…"


def print_tree(spans: list[Span], attrs: str = "") -> None:
    children: dict[str, list[Span]] = defaultdict(list)
    ids = {s.span_id for s in spans}
    tops = []
    for s in sorted(spans, key=lambda s: s.start):
        if s.parent_span_id and s.parent_span_id in ids:
            children[s.parent_span_id].append(s)
        else:
            tops.append(s)

    def walk(span: Span, depth: int) -> None:
        r = role(span.name, span.attrs, not span.parent_span_id)
        missing = " (parent not recorded)" if span.parent_span_id and depth == 0 else ""
        print(
            f"{'  ' * depth}{span.name} [{span.kind} {r} {span.status}"
            f" {span.duration_ms:.1f}ms seq {span.seq}]{missing}"
        )
        for key, value in sorted(span.attrs.items()):
            wanted = attrs == "all" or (
                attrs == "key"
                and key.startswith(KEY_PREFIXES)
                and not any(part in key for part in SKIP_KEYS)
            )
            if wanted:
                print(f"{'  ' * depth}    {key} = {_show(value)}")
        for child in children[span.span_id]:
            walk(child, depth + 1)

    for top in tops:
        walk(top, 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.dump", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--trace", default="", help="trace id prefix")
    parser.add_argument("--run", type=int, default=None, help="run_index from expected.json")
    parser.add_argument("--attrs", action="store_true")
    parser.add_argument("--all-attrs", action="store_true")
    args = parser.parse_args(argv)
    spans = unique(spans_of(load_payloads(args.out)))
    wanted = args.trace
    if args.run is not None:
        runs = json.loads((args.out / "expected.json").read_text())["runs"]
        wanted = next(t for t, r in runs.items() if r["run_index"] == args.run)
    traces: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        if s.trace_id.startswith(wanted):
            traces[s.trace_id].append(s)
    mode = "all" if args.all_attrs else ("key" if args.attrs else "")
    for trace_id, members in traces.items():
        print(f"== trace {trace_id} ({len(members)} spans)")
        print_tree(members, mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
