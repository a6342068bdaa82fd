"""The closing table of `screen` and its regression gate (SCREEN.md section 6).

Per task: passes over runs, one cell per round (pass, fail, or the error
class the screener saw), error classes, latency p50 and steps p50; then
the screening's composite, radar and pass^k as the collector computed
them, and whether every planned run is stored. The gate asks the
collector's compare, so a release is gated by the same test as
`badge-collector compare` and the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TextIO

from collector.api_client import ApiClient, segment
from collector.screening.document import RADAR_AXES
from collector.screening.screener import Outcome

BAR_WIDTH = 30


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(value: bool | None, error_class: str | None) -> str:
    if error_class not in (None, "none"):
        return str(error_class)
    return "-" if value is None else ("pass" if value else "fail")


def print_table(document: dict[str, Any], outcomes: list[Outcome], out: TextIO) -> None:
    """The per-task table, then the screening's scores."""
    seen = {(o.task_id, o.round): o.error_class for o in outcomes}
    rows = document["tasks"]
    rounds = max(document["rounds"] or 0, document.get("planned_rounds") or 0)
    width = max([len("task")] + [len(str(t["task_id"])) for t in rows])
    width = min(width, 40)
    print(
        f"screening {document['screening_id']}  suite {document['suite_name']} "
        f"({str(document['suite_digest'])[:12]})  version {document['version'] or '-'}",
        file=out,
    )
    print(
        f"{'task':<{width}}  {'passed':>7}  {'rounds':<{6 * rounds}}  "
        f"{'p50 ms':>9}  {'steps':>5}  errors",
        file=out,
    )
    for task in rows:
        cells = [
            _cell(value, seen.get((task["task_id"], index)))
            for index, value in enumerate(task["outcomes"], 1)
        ]
        classes = ", ".join(
            f"{name} {n}" for name, n in task["error_classes"].items() if name != "none"
        )
        print(
            f"{str(task['task_id'])[:width]:<{width}}  "
            f"{task['successes']:>3}/{task['runs']:<3}  "
            f"{' '.join(f'{c:<5}' for c in cells):<{6 * rounds}}  "
            f"{_num(task['latency_p50_ms'], 1):>9}  {_num(task['steps_p50'], 1):>5}  "
            f"{classes or '-'}",
            file=out,
        )
    print(
        f"runs {document['total_runs']}: completed {document['completed_runs']}, "
        f"successful {document['successful_runs']}",
        file=out,
    )
    if document.get("complete") is False:
        print(f"INCOMPLETE: {stored_of_planned(document)}", file=out)
    print(
        f"composite {_num(document['composite_score'])}   pass^1 {_num(document['pass_1'], 3)}"
        f"  pass^3 {_num(document['pass_3'], 3)}  pass^5 {_num(document['pass_5'], 3)}",
        file=out,
    )
    radar = document.get("radar") or {}
    for axis in RADAR_AXES:
        value = radar.get(axis)
        filled = 0 if value is None else round(value / 100 * BAR_WIDTH)
        bar = "(no evidence)".ljust(BAR_WIDTH) if value is None else "█" * filled
        print(f"  {axis:<16} {bar.ljust(BAR_WIDTH, '·')} {_num(value, 1):>6}", file=out)


def stored_of_planned(document: dict[str, Any]) -> str:
    """`3 of 20 planned runs are stored (4 tasks x 5 rounds)`."""
    return (
        f"{document['stored_runs']} of {document['planned_runs']} planned runs are stored "
        f"({document['planned_tasks']} tasks x {document['planned_rounds']} rounds)"
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """The gate's answer: `regressed` None when the comparison could not be made; `body`
    the compare document (None then), `problem` why it could not be made."""

    regressed: bool | None
    lines: tuple[str, ...]
    body: dict[str, Any] | None = None
    problem: str | None = None


def compare(client: ApiClient, agent_id: str, baseline: str, screening_id: str) -> Verdict:
    """The baseline version against this screening's runs (`head_screening`)."""
    reply = client.get(  # with the evidence: the reports say what an axis without a verdict lacks
        f"/agents/{segment(agent_id)}/compare",
        base=baseline,
        head_screening=screening_id,
        evidence="true",
    )
    if not reply.ok:
        return Verdict(None, (f"error: compare failed: {reply.detail()}",), None, reply.detail())
    body = reply.body
    lines = [
        f"compared with {baseline}: composite "
        f"{_num(body['composite']['base'])} -> {_num(body['composite']['head'])}",
    ]
    for axis, change in body["axes"].items():
        lines.append(
            f"  {axis:<16} {_num(change['base']):>7} -> {_num(change['head']):<7} "
            f"{change['verdict']}"
            + (f" (p adj. {_num(change.get('p_adjusted'), 4)})" if change.get("p_adjusted") else "")
        )
    regressed = bool(body["regressed"])
    lines.append("REGRESSED" if regressed else "no regression")
    return Verdict(regressed, tuple(lines), body)
