"""Recognition alone, per span (CONVENTIONS.md section 8).

    python bench/recognition.py [--repeat 15] [--user-files 20] [--root CHECKOUT]
                                [--versus CHECKOUT --rounds 5]

Decodes every recorded request (tests/fixtures/corpus and recordings: 13
frameworks and instrumentations) and the ingest bench's own requests
(bench/payloads.py, 8 x 512 spans) as ingest does, with the Selection the
conventions give, then times what ingest does per span to classify it and
reduce it to its facts, over every span, `--repeat` times (the fastest
pass, in CPU time of this process: the machine is shared, and other work
only ever adds time):

- with the built-in conventions;
- the same with the recognizer's memory of decisions cleared before each
  pass (`cold`): every span signature and span name decided afresh, as the
  first requests of a decoder process are;
- with `--user-files` generated user files on top, tried first: families of
  their own (own scopes, own attributes, span-name templates, JSON usage)
  to which no recorded span belongs, so each span pays only for walking past
  them. A quarter of them have no `applies_to` and rules on span names alone:
  those are tried on every span.

`--root` times another checkout instead: one from before conventions is
timed through its classify + span_facts (its own Selection). `--versus`
pairs the two in one sitting: it alternates `--rounds` runs of the other
checkout and of this one, and prints each figure's median over the rounds
and the median of the per-round ratios to the other checkout:

    git archive $(git merge-base HEAD main) | tar -x -C /tmp/before
    python bench/recognition.py --versus /tmp/before

Figures: CPU time on the 2-core machine shared with other work, niced,
`--versus` the commit before conventions (dccb70b), 7 rounds of 15 passes:
    recorded spans (2,706)  before 3.71 us/span; built-ins 3.39 (x0.94),
                            cold 4.32 (x1.18), + 20 user files 3.60 (x0.98)
    bench/payloads (4,096)  before 3.79 us/span; built-ins 3.64 (x0.95),
                            cold 3.73 (x1.00), + 20 user files 3.71 (x0.99)
With the families of issue 38 items 2-3 (22 built-in files, the requested
tool calls read from LLM spans' output, gen_ai.output.messages parsed on LLM
spans that name a tool call), 5 rounds of 7 passes, same sitting:
    versus the commit before them (18 files; 3,716 recorded spans now):
      recorded spans  3.69 -> 4.36 us/span (x1.15); bench/payloads 3.89 -> 4.22 (x1.09)
    versus dccb70b (before conventions):
      recorded spans  3.59 -> 4.36 us/span (x1.18); bench/payloads 3.71 -> 4.14 (x1.16)
    + 20 user files on top of the 22: x1.07 / x1.01 of the built-ins alone.
Decoding itself (proto.decode_request, the new Selection) is unchanged within
noise: 16.4-16.7 -> 16.7-16.9 us per recorded span, 6.9-7.0 -> 6.8-7.1 per
bench span. An LLM span's facts cost 0.28 us more (1.50 -> 1.78 us: the
requested calls; an answer without "tool_call" in it is not parsed).
A decoder spends ~60 us of CPU per span at bench/ingest.py's rate (~33k
spans/s on 2 decoders, collector.ingest.decoding.tune_gc): these
differences, 0.8 us at most, are under 1.5% of ingest.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
FIXTURES = HERE / "tests" / "fixtures"


def user_file(number: int) -> str:
    """A made-up family; every 4th is gated by an attribute, every 4th (offset
    1) has no applies_to and rules on span names only."""
    family = f"fam{number}"
    if number % 4 == 0:
        applies = f"applies_to: {{attr: {family}.kind}}\n"
    elif number % 4 == 1:
        applies = ""
    else:
        applies = f"applies_to: {{scope: '{family}.*'}}\n"
    names = number % 4 == 1
    return (
        f"convention: bench-{number}\nversion: 1\n{applies}"
        "not_a_step:\n"
        f"  - when: {{attr: {family}.kind, equals: ANSWER}}\n"
        "tool:\n"
        f"  - when: {{attr: {family}.kind, equals: TOOL}}\n"
        f"    tool_name: [{{name: '^Tool: (.+)$'}}, {{attr: {family}.tool}}]\n"
        + (f"  - when: {{name: '^{family} Function: '}}\n" if names else "")
        + "llm:\n"
        f"  - when: {{attr: {family}.kind, in: [LLM, GENERATION]}}\n"
        f"    model: [{{attr: {family}.model}}]\n"
        "agent:\n"
        f"  - when: {{attr: {family}.kind, equals: AGENT}}\n"
        + (f"  - when: {{name: '^{family} agent run'}}\n" if names else "")
        + "usage:\n"
        f"  input_tokens: [{{attr: {family}.usage, json: input}}]\n"
        f"  output_tokens: [{{attr: {family}.usage, json: output}}]\n"
    )


def recorded_bodies() -> list[tuple[bytes, str]]:
    """Every recorded request: (body, "protobuf" or "json")."""
    found = []
    for meta_path in sorted(FIXTURES.glob("*/*/payloads/*.meta.json")):
        meta = json.loads(meta_path.read_text())
        body = meta_path.with_name(meta_path.name.replace(".meta.json", ".bin")).read_bytes()
        if meta.get("content_encoding") == "gzip":
            body = gzip.decompress(body)
        content = meta.get("content_type") or ""
        found.append((body, "json" if content.startswith("application/json") else "protobuf"))
    return found


def bench_bodies() -> list[tuple[bytes, str]]:
    from bench.payloads import build_requests

    return [(body, "protobuf") for body in build_requests(8)]


Classify = Callable[[Any], Any]
Reset = Callable[[], None] | None


def classifiers(user_files: int) -> dict[str, tuple[Any, Classify, Reset]]:
    """name -> (the Selection, what ingest does per decoded span, what forgets
    the decisions it remembered, or None)."""
    from collector.assembly.facts import resource_facts, span_facts

    try:
        from collector.conventions import ConventionSource, builtin_set, compile_set
        from collector.conventions.active import builtin_sources
        from collector.ingest.decoding import recognising
    except ImportError:  # a checkout from before conventions
        from collector.ingest.decoding import SELECTION

        def old(span: Any) -> Any:
            return span_facts(
                span.name, span.attributes, resource_facts(span.resource), span.events
            )

        return {"before (classify + facts)": (SELECTION, old, None)}

    try:
        from collector.conventions import recognise_span
    except ImportError:  # a checkout from before recognition was one step (issue 39)

        def recognise_span(span: Any, conventions: Any = None) -> Any:
            return conventions.recognizer.recognise(
                span.name,
                span.kind,
                span.status_code,
                span.scope_name,
                span.attributes,
                span.resource,
            )

    def timed(conventions: Any, cold: bool = False) -> tuple[Any, Classify, Reset]:
        def new(span: Any) -> Any:
            found = recognise_span(span, conventions)
            return span_facts(
                found, span.name, span.attributes, resource_facts(span.resource), span.events
            )

        def forget() -> None:
            conventions.recognizer._decisions.clear()
            conventions.recognizer._names.clear()

        return recognising(conventions).selection, new, forget if cold else None

    users = tuple(
        ConventionSource(f"bench-{n}.yaml", f"bench-{n}.yaml", user_file(n))
        for n in range(user_files)
    )
    with_users = compile_set(users + builtin_sources())
    builtins = builtin_set()
    return {
        f"built-ins ({len(builtins.conventions)} files)": timed(builtins),
        "built-ins, cold": timed(compile_set(builtin_sources()), cold=True),
        f"+ {user_files} user files": timed(with_users),
    }


def per_span_us(spans: list[Any], classify: Classify, reset: Reset, repeat: int) -> float:
    fastest = float("inf")
    for _ in range(repeat):
        if reset is not None:
            reset()
        started = time.process_time()
        for span in spans:
            classify(span)
        fastest = min(fastest, time.process_time() - started)
    return fastest / len(spans) * 1e6


def measure(root: Path, repeat: int, user_files: int) -> dict[str, list[Any]]:
    """label -> [input, spans, us/span] for each input."""
    sys.path.insert(0, str(root.resolve()))
    sys.path.insert(1, str(HERE))  # bench.payloads, whatever the checkout
    import proto

    inputs = {"recorded spans": recorded_bodies(), "bench/payloads": bench_bodies()}
    figures: dict[str, list[Any]] = {}
    for label, (selection, classify, reset) in classifiers(user_files).items():
        for source, bodies in inputs.items():
            spans = [
                span
                for body, content in bodies
                for span in proto.decode_request(
                    proto.parse_request(body, content), selection, proto.Limits()
                ).spans
            ]
            figure = per_span_us(spans, classify, reset, repeat)
            figures[f"{label}|{source}"] = [label, source, len(spans), figure]
    return figures


def line(label: str, source: str, spans: int, figure: float) -> str:
    return f"{label:<28} {source:<15} {spans:>6,} spans  {figure:6.2f} us/span"


def versus(other: Path, rounds: int, repeat: int, user_files: int) -> None:
    """Alternate the other checkout and this one; medians, and ratios per round
    to the other checkout's figure for the same input."""
    runs: dict[str, list[dict[str, list[Any]]]] = {"other": [], "this": []}
    for _ in range(rounds):
        for side, root in (("other", other), ("this", HERE)):
            command = [sys.executable, __file__, "--json", "--root", str(root)]
            command += ["--repeat", str(repeat), "--user-files", str(user_files)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            runs[side].append(json.loads(done.stdout))
    for side in ("other", "this"):
        for key, (label, source, spans, _) in runs[side][0].items():
            figure = statistics.median(r[key][3] for r in runs[side])
            ratios = []
            for mine, theirs in zip(runs[side], runs["other"], strict=True):
                base = next(v[3] for v in theirs.values() if v[1] == source)
                ratios.append(mine[key][3] / base)
            ratio = statistics.median(ratios)
            print(f"{line(label, source, spans, figure)}  x{ratio:.3f} of the other checkout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--user-files", type=int, default=20)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to time")
    parser.add_argument("--versus", type=Path, default=None, help="a checkout to pair with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.versus is not None:
        versus(args.versus, args.rounds, args.repeat, args.user_files)
        return
    figures = measure(args.root, args.repeat, args.user_files)
    if args.json:
        print(json.dumps(figures))
        return
    for label, source, spans, figure in figures.values():
        print(line(label, source, spans, figure))


if __name__ == "__main__":
    main()
