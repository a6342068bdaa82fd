"""Write expected.json and spans_summary.md from the recorded payloads and the ground truth.

Python recorders call `Recording.finish(...)`. Recorders in other languages run (cwd
/work/main/recordings):
    python -m kit.finish --out DIR --truth truth.json --scenario NAME --description "..." \
        --packages-json versions.json [--exporters-json exporters.json] [--notes-file notes.md]
truth.json: a list of runs (or {"runs": [...], "exporters": {...}, "notes": [...]}), each with
`trace_id` (32 hex), `root_span_id` (16 hex, optional: else the trace's parentless `badge.run`)
and the code-counted fields (task_id, service_name, success, outcome, error, output,
expected_output, tool_calls, tool_errors, tool_calls_by_name, llm_calls, llm_errors,
input_tokens, output_tokens, handoffs, notes). versions.json: {"package": "version", ...}.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from kit.roles import ROLE_ORDER, role, usage

ROOT_SPAN_NAME = "badge.run"
KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUSES = {0: "UNSET", 1: "OK", 2: "ERROR"}
COUNTING = (
    "ground truth, counted in code, never from spans: tool_calls = tool function bodies entered "
    "(including ones that then raised; tool_errors of them raised); llm_calls = model calls made, "
    "counted in the fake model / mock model API (including failed ones, llm_errors); "
    "input_tokens / output_tokens = sums of the usage the model side reported to the framework; "
    "handoffs = agent-to-agent handoffs counted where the recorder observes them (not steps). "
    "success = badge.run.success: false for outcome 'exception' (the agent call raised) and "
    "'wrong_answer' (returned, but not the expected output). naive_span_view = what counting "
    "spans by the role rules of spans_summary.md gives; NOT ground truth, shown for comparison."
)
TRUTH_DEFAULTS: dict[str, Any] = {
    "task_id": None,
    "service_name": None,
    "success": False,
    "outcome": None,
    "error": None,
    "output": None,
    "expected_output": None,
    "tool_calls": 0,
    "tool_errors": 0,
    "tool_calls_by_name": {},
    "llm_calls": 0,
    "llm_errors": 0,
    "input_tokens": 0,
    "output_tokens": 0,
    "handoffs": 0,
}
ROLE_TITLES = {
    "root": "Root span",
    "agent": "Agent spans",
    "chain": "Chain / workflow spans",
    "llm": "LLM spans",
    "tool": "Tool spans",
    "other": "Other spans",
}


# -- decoding ------------------------------------------------------------------------------------


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    scope: str
    scope_version: str
    resource: dict[str, Any]
    attrs: dict[str, Any]
    status: str
    status_message: str
    start: int
    end: int
    events: list[str]
    seq: int  # request it arrived in
    wire_index: int  # position over the whole recording
    role: str = ""
    links: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def duration_ms(self) -> float:
        return round((self.end - self.start) / 1e6, 6)


def any_value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_ids_to_base64(node: Any) -> Any:
    """OTLP/JSON carries ids as hex; protobuf's JSON mapping wants base64."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in (
                "traceId",
                "spanId",
                "parentSpanId",
                "trace_id",
                "span_id",
                "parent_span_id",
            ):
                if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]*", value):
                    value = base64.b64encode(bytes.fromhex(value)).decode()
            out[key] = _hex_ids_to_base64(value)
        return out
    if isinstance(node, list):
        return [_hex_ids_to_base64(v) for v in node]
    return node


def decode_request(body: bytes, meta: dict[str, Any]) -> ExportTraceServiceRequest:
    if (meta.get("content_encoding") or "").lower() == "gzip":
        body = gzip.decompress(body)
    content_type = (meta.get("content_type") or "").split(";")[0].strip().lower()
    if content_type == "application/json":
        request = ExportTraceServiceRequest()
        json_format.ParseDict(
            _hex_ids_to_base64(json.loads(body)), request, ignore_unknown_fields=True
        )
        return request
    return ExportTraceServiceRequest.FromString(body)


def load_payloads(out: Path) -> list[tuple[dict[str, Any], ExportTraceServiceRequest]]:
    """(meta, request) for every recorded request, in seq order."""
    folder = Path(out) / "payloads"
    found = []
    for meta_path in folder.glob("*.meta.json"):
        meta = json.loads(meta_path.read_text())
        body = (folder / meta_path.name.replace(".meta.json", ".bin")).read_bytes()
        found.append((meta, decode_request(body, meta)))
    return sorted(found, key=lambda item: item[0]["seq"])


def spans_of(payloads: list[tuple[dict[str, Any], ExportTraceServiceRequest]]) -> list[Span]:
    """Every span in wire order (duplicates from retries included)."""
    spans = []
    for meta, request in payloads:
        for rs in request.resource_spans:
            resource = {kv.key: any_value(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    spans.append(
                        Span(
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_span_id=s.parent_span_id.hex(),
                            name=s.name,
                            kind=KINDS.get(s.kind, str(s.kind)),
                            scope=ss.scope.name,
                            scope_version=ss.scope.version,
                            resource=resource,
                            attrs={kv.key: any_value(kv.value) for kv in s.attributes},
                            status=STATUSES.get(s.status.code, str(s.status.code)),
                            status_message=s.status.message,
                            start=s.start_time_unix_nano,
                            end=s.end_time_unix_nano,
                            events=[e.name for e in s.events],
                            seq=meta["seq"],
                            wire_index=len(spans),
                            links=len(s.links),
                        )
                    )
    return spans


def unique(spans: list[Span]) -> list[Span]:
    """First copy of each (trace_id, span_id)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for span in spans:
        key = (span.trace_id, span.span_id)
        if key not in seen:
            seen.add(key)
            out.append(span)
    return out


# -- expected.json -------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def _find_root(trace_spans: list[Span], root_span_id: str | None) -> Span | None:
    if root_span_id:
        for span in trace_spans:
            if span.span_id == root_span_id:
                return span
        return None
    parentless = [s for s in trace_spans if not s.parent_span_id]
    named = [s for s in parentless if s.name == ROOT_SPAN_NAME]
    return (named or parentless or [None])[0]


def _naive_view(trace_spans: list[Span]) -> dict[str, int]:
    llm = [s for s in trace_spans if s.role == "llm"]
    return {
        "tool_spans": sum(1 for s in trace_spans if s.role == "tool"),
        "llm_spans": len(llm),
        "llm_span_input_tokens": sum(usage(s.attrs)[0] for s in llm),
        "llm_span_output_tokens": sum(usage(s.attrs)[1] for s in llm),
        "error_spans": sum(1 for s in trace_spans if s.status == "ERROR"),
    }


def build_runs(truth_runs: list[dict[str, Any]], spans: list[Span]) -> dict[str, dict[str, Any]]:
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    runs: dict[str, dict[str, Any]] = {}
    for index, given in enumerate(truth_runs):
        trace_id = given["trace_id"]
        trace_spans = by_trace.get(trace_id, [])
        root = _find_root(trace_spans, given.get("root_span_id"))
        roots = {root.span_id} if root else set()
        for span in trace_spans:
            span.role = role(span.name, span.attrs, span.span_id in roots)
        run: dict[str, Any] = {"run_index": given.get("run_index", index)}
        for key, default in TRUTH_DEFAULTS.items():
            run[key] = _jsonable(given.get(key, default))
        if not run["service_name"] and root is not None:
            run["service_name"] = root.resource.get("service.name")
        if run["outcome"] is None:
            run["outcome"] = "ok" if run["success"] else "wrong_answer"
        seqs = sorted({s.seq for s in trace_spans})
        run.update(
            {
                "root_span_id": root.span_id if root else given.get("root_span_id"),
                "root_span_name": root.name if root else None,
                "root_duration_ms": root.duration_ms if root else None,
                "root_status": root.status if root else None,
                "span_count": len(trace_spans),
                "payload_seqs": seqs,
                "root_payload_seq": root.seq if root else None,
                "notes": given.get("notes") or "",
                "naive_span_view": _naive_view(trace_spans),
            }
        )
        if root is None:
            print(f"kit: run {index} (trace {trace_id}): root span not found", file=sys.stderr)
        runs[trace_id] = run
    return runs


def derive_exporters(
    payloads: list[tuple[dict[str, Any], ExportTraceServiceRequest]],
) -> dict[str, dict[str, Any]]:
    """service.name -> what the payloads show of its exporter (when the recorder gave none)."""
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for meta, request in payloads:
        ctype = (meta.get("content_type") or "").split(";")[0]
        protocol = (
            "grpc"
            if meta["transport"] == "grpc"
            else ("http/json" if ctype == "application/json" else "http/protobuf")
        )
        for rs in request.resource_spans:
            attrs = {kv.key: any_value(kv.value) for kv in rs.resource.attributes}
            seen[str(attrs.get("service.name"))].add(
                (protocol, meta.get("content_encoding") or "none")
            )
    return {
        service: {
            "protocol": "/".join(sorted({p for p, _ in pairs})),
            "compression": "/".join(sorted({c for _, c in pairs})),
        }
        for service, pairs in sorted(seen.items())
    }


# -- spans_summary.md ----------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n").replace("\r", "")


def _type_name(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}.get(
        type(value), type(value).__name__
    )


def _example(value: Any, limit: int = 70) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    else:
        text = str(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    return _md(text)


def _generic_key(key: str) -> str:
    return re.sub(r"(?<=\.)\d+(?=\.|$)", "<i>", key)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k}:{n}" for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _bullet_note(note: str) -> str:
    return note if note.startswith("- ") else f"- {note}"


def build_summary(
    scenario: str,
    description: str,
    framework_packages: dict[str, str],
    payloads: list[tuple[dict[str, Any], ExportTraceServiceRequest]],
    spans: list[Span],
    runs: dict[str, dict[str, Any]],
    traces_without_run: list[str],
    notes: list[str],
) -> str:
    lines = [f"# {scenario}: spans actually emitted", "", description, ""]
    if framework_packages:
        lines += ["Packages: " + ", ".join(f"{k} {v}" for k, v in framework_packages.items()), ""]
    lines.append(
        f"Payloads: {len(payloads)} export requests, {len(spans)} spans, {len(runs)} runs."
    )
    doors = Counter(
        (m["transport"], m.get("content_type") or "-", m.get("content_encoding") or "-")
        for m, _ in payloads
    )
    for (transport, ctype, enc), n in sorted(doors.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {n} × transport={transport} content-type={ctype} content-encoding={enc}")
    per_request = Counter(s.seq for s in spans)
    if per_request:
        lines.append(
            f"- spans per request: min {min(per_request.values())}, max {max(per_request.values())}"
        )
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    split = sum(1 for r in runs.values() if len(r["payload_seqs"]) > 1)
    root_last_request = sum(
        1
        for r in runs.values()
        if r["root_payload_seq"] is not None and r["root_payload_seq"] == max(r["payload_seqs"])
    )
    root_last_wire = sum(
        1
        for tid, r in runs.items()
        if by_trace.get(tid) and by_trace[tid][-1].span_id == r["root_span_id"]
    )
    n = len(runs)
    lines += [
        f"- runs whose spans arrived in more than one request: {split} of {n}",
        "- runs whose root span came in the last request of that trace: "
        f"{root_last_request} of {n}",
        f"- runs whose root span is the last span of its trace in wire order: {root_last_wire} of "
        f"{n} (inside one request the SDK groups spans by resource and instrumentation scope, "
        "so wire order is not end order)",
    ]
    scopes = Counter((s.scope, s.scope_version) for s in spans)
    lines.append(
        "- instrumentation scopes: "
        + ", ".join(
            f"`{name}` {version} ({count})"
            for (name, version), count in sorted(scopes.items(), key=lambda kv: -kv[1])
        )
    )
    resource_keys = sorted({k for s in spans for k in s.resource})
    lines.append("- resource attributes: " + ", ".join(f"`{k}`" for k in resource_keys))
    services = Counter(str(s.resource.get("service.name")) for s in spans)
    lines.append(
        "- service.name values: "
        + ", ".join(f"`{k}` ({v})" for k, v in sorted(services.items(), key=lambda kv: -kv[1]))
    )
    if traces_without_run:
        outside = [s for s in spans if s.trace_id in set(traces_without_run)]
        names = Counter(s.name for s in outside)
        lines.append(
            f"- traces outside any run: {len(traces_without_run)} ({len(outside)} spans: "
            + ", ".join(f"`{k}` ×{v}" for k, v in names.most_common())
            + ")"
        )

    # span groups: (role, name, kind, scope)
    groups: dict[tuple[str, str, str, str], list[Span]] = defaultdict(list)
    for span in spans:
        span_role = span.role or role(span.name, span.attrs, False)
        groups[(span_role, span.name, span.kind, span.scope)].append(span)
    ordered = sorted(groups, key=lambda g: (ROLE_ORDER.index(g[0]), g[1], g[2], g[3]))
    lines += [
        "",
        "## Span names and kinds",
        "",
        "| role (by attributes) | span name | kind | scope | count | status | attribute keys |",
        "|---|---|---|---|---|---|---|",
    ]
    for g in ordered:
        members = groups[g]
        keys = sorted({_generic_key(k) for s in members for k in s.attrs})
        label = "root (ours)" if g[0] == "root" else g[0]
        lines.append(
            f"| {label} | `{_md(g[1])}` | {g[2]} | `{g[3]}` | {len(members)} | "
            f"{_counts(Counter(s.status for s in members))} | "
            + ", ".join(f"`{k}`" for k in keys)
            + " |"
        )

    for section_role in ROLE_ORDER:
        role_groups = [g for g in ordered if g[0] == section_role]
        if not role_groups:
            continue
        lines += ["", f"## {ROLE_TITLES[section_role]}: attributes (one example value each)"]
        shown: list[tuple[str, frozenset[str]]] = []
        for g in role_groups:
            members = groups[g]
            keyset = frozenset(_generic_key(k) for s in members for k in s.attrs)
            same = next((name for name, ks in shown if ks == keyset), None)
            if len(shown) >= 3 and same is not None:
                lines.append(f"- (also `{_md(g[1])}` ×{len(members)}, same shape as `{same}`)")
                continue
            shown.append((_md(g[1]), keyset))
            lines += [
                "",
                f"### `{_md(g[1])}` ({g[2]}, scope `{g[3]}`, {len(members)} spans)",
                "",
                "| attribute (`<i>` = any index) | type | example |",
                "|---|---|---|",
            ]
            examples: dict[str, Any] = {}
            for s in members:
                for k, v in s.attrs.items():
                    examples.setdefault(_generic_key(k), v)
            for k in sorted(examples):
                v = examples[k]
                lines.append(f"| `{_md(k)}` | {_type_name(v)} | {_example(v)} |")
            events = Counter(e for s in members for e in s.events)
            if events:
                lines += ["", "Events: " + ", ".join(f"`{k}` ×{v}" for k, v in events.items())]
            messages = Counter(s.status_message for s in members if s.status_message)
            if messages:
                lines.append(
                    "Status messages: "
                    + ", ".join(f"`{_example(k, 60)}` ×{v}" for k, v in messages.most_common(3))
                )

    lines += ["", "## Notes", ""]
    lines += [_bullet_note(n) for n in notes] if notes else ["- (none)"]

    with_handoffs = any(r["handoffs"] for r in runs.values())
    columns = ["#", "trace id", "task", "success", "outcome", "tools (truth)", "tool spans"]
    columns += ["llm calls (truth)", "llm spans", "tokens in/out (truth)"]
    columns += ["tokens in/out (llm spans)"] + (["handoffs"] if with_handoffs else [])
    columns += ["root ms", "spans", "requests"]
    lines += [
        "",
        "## Runs: ground truth vs. what the spans show",
        "",
        "Ground truth (counted in the tool / model code) first; then, for comparison, the number "
        "of spans with role tool / llm under the role rules above and the token sums over those "
        "llm spans. A difference is not a bug in the corpus: it shows what a collector must get "
        "right.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    differences = []
    for tid, r in runs.items():
        v = r["naive_span_view"]
        ms = "-" if r["root_duration_ms"] is None else f"{r['root_duration_ms']:.1f}"
        lines.append(
            f"| {r['run_index']} | `{tid[:12]}…` | {r['task_id']} | {r['success']} | "
            f"{r['outcome']} | {r['tool_calls']} | {v['tool_spans']} | {r['llm_calls']} | "
            f"{v['llm_spans']} | {r['input_tokens']}/{r['output_tokens']} | "
            f"{v['llm_span_input_tokens']}/{v['llm_span_output_tokens']} | "
            + (f"{r['handoffs']} | " if with_handoffs else "")
            + f"{ms} | {r['span_count']} | {len(r['payload_seqs'])} |"
        )
        for truth_key, view_key in (
            ("tool_calls", "tool_spans"),
            ("llm_calls", "llm_spans"),
            ("input_tokens", "llm_span_input_tokens"),
            ("output_tokens", "llm_span_output_tokens"),
        ):
            if r[truth_key] != v[view_key]:
                differences.append(
                    f"- run {r['run_index']} ({r['task_id']}, {r['outcome']}): "
                    f"{truth_key}={r[truth_key]} but {view_key}={v[view_key]}"
                )
    lines.append("")
    if differences:
        lines += ["Differences between ground truth and naive span counts:", ""] + differences
    else:
        lines.append("Naive span counts equal the ground truth for every run.")
    return "\n".join(lines) + "\n"


# -- entry points --------------------------------------------------------------------------------


def finish(
    out: Path | str,
    scenario: str,
    description: str,
    truth_runs: list[dict[str, Any]],
    packages: dict[str, str],
    framework_packages: list[str] | None = None,
    exporters: dict[str, dict[str, Any]] | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Write out/expected.json and out/spans_summary.md; returns the expected.json content."""
    out = Path(out)
    payloads = load_payloads(out)
    spans = unique(spans_of(payloads))
    runs = build_runs(truth_runs, spans)
    run_traces = set(runs)
    traces_without_run = sorted({s.trace_id for s in spans} - run_traces)
    for span in spans:
        if not span.role:
            span.role = role(span.name, span.attrs, False)
    now = int(time.time())
    expected = {
        "scenario": scenario,
        "description": description,
        "recorded_at_unix": now,
        "recorded_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "packages": packages,
        "root_span_name": ROOT_SPAN_NAME,
        "run_attributes": {
            "task": "badge.task.id (root span)",
            "success": "badge.run.success (root span, bool)",
        },
        "exporters": exporters or derive_exporters(payloads),
        "payload_count": len(payloads),
        "span_count": len(spans),
        "run_count": len(runs),
        "traces_without_run": traces_without_run,
        "counting": COUNTING,
        "runs": runs,
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")
    if framework_packages is None:
        framework_packages = list(packages)
    summary = build_summary(
        scenario,
        description,
        {k: packages[k] for k in framework_packages if k in packages},
        payloads,
        spans,
        runs,
        traces_without_run,
        notes or [],
    )
    (out / "spans_summary.md").write_text(summary)
    size = sum(p.stat().st_size for p in (out / "payloads").glob("*"))
    print(
        f"kit: wrote {out / 'expected.json'} and spans_summary.md: {len(runs)} runs, "
        f"{len(payloads)} requests, {len(spans)} spans, payloads {size / 1e6:.2f} MB",
        file=sys.stderr,
    )
    if traces_without_run:
        print(f"kit: {len(traces_without_run)} traces outside any run", file=sys.stderr)
    return expected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kit.finish", description=__doc__)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--truth", required=True, type=Path)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--description", default="")
    parser.add_argument("--packages-json", type=Path, help='{"package": "version"}')
    parser.add_argument(
        "--framework-packages",
        default=None,
        help="comma-separated names listed on the summary's Packages line (default: all)",
    )
    parser.add_argument("--exporters-json", type=Path, help='{"service.name": {...}}')
    parser.add_argument("--notes-file", type=Path, help="one summary note per line")
    args = parser.parse_args(argv)

    loaded = json.loads(args.truth.read_text())
    truth_runs = loaded["runs"] if isinstance(loaded, dict) else loaded
    exporters = loaded.get("exporters") if isinstance(loaded, dict) else None
    notes = list(loaded.get("notes", [])) if isinstance(loaded, dict) else []
    if args.exporters_json:
        exporters = json.loads(args.exporters_json.read_text())
    if args.notes_file:
        notes += [ln for ln in args.notes_file.read_text().splitlines() if ln.strip()]
    packages = json.loads(args.packages_json.read_text()) if args.packages_json else {}
    framework = args.framework_packages.split(",") if args.framework_packages else None
    finish(
        args.out,
        args.scenario,
        args.description,
        truth_runs,
        packages,
        framework_packages=framework,
        exporters=exporters,
        notes=notes,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
