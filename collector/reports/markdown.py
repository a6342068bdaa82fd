"""A screening and a compare as Markdown, for a CI job's summary page (issue 41).

GitHub shows a step's Markdown above its logs ($GITHUB_STEP_SUMMARY) and
refuses a step summary over 1 MiB, so the report keeps whole the part a
reviewer needs (the verdict, the scores, the compare, the certificate) and
spends what is left on the failed tasks, one collapsed `<details>` each,
the most failed first; past the budget it names the rest. Every text that
came from an agent, a suite or a user is escaped for where it goes (`text`).
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, urlencode

from collector.reports.facts import CompareFacts, Links, RoundFacts, ScreeningFacts, TaskFacts
from collector.reports.text import block, code, html_text, inline
from collector.reports.words import moved_tasks, num, sides, tally, test_name

AXES: Final = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
# GitHub's step summary limit is 1 MiB; the failed tasks' blocks get what the rest leaves.
DETAILS_BUDGET_BYTES: Final = 700_000
NAMED_PAST_BUDGET: Final = 100  # failed tasks named, without details, past the budget
MOVED_ROWS: Final = 50


def _icon(exit_code: int) -> str:
    return {0: "✅", 1: "❌"}.get(exit_code, "⚠️")


def _path(*segments: str) -> str:
    return "".join(f"/{quote(s, safe='')}" for s in segments)


def _link(text: str, url: str | None) -> str:
    return text if url is None else f"[{text}]({url})"


def _table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def compare_section(facts: CompareFacts, links: Links) -> list[str]:
    """Each axis's verdict as a table, the tasks that moved, the dashboard's compare page."""
    body = facts.body
    base, head = sides(body)
    composite = body.get("composite") or {}
    counted = [str((body.get(side) or {}).get("runs_counted", "-")) for side in ("base", "head")]
    blank = [""] * 4  # verdict, test, p, p adj.: a side's row has none
    rows = [
        ["runs counted", *counted, "", *blank],
        ["composite", *(num(composite.get(key)) for key in ("base", "head", "delta")), *blank],
    ]
    for axis, change in (body.get("axes") or {}).items():
        verdict = str(change.get("verdict"))
        rows.append(
            [
                inline(axis.replace("_", " ")),
                num(change.get("base")),
                num(change.get("head")),
                num(change.get("delta")),
                f"**{verdict}**" if verdict in ("regressed", "improved") else verdict,
                test_name(change),
                num(change.get("p_value"), 6),
                num(change.get("p_adjusted"), 6),
            ]
        )
    sides_shown = [code(base, cell=True), code(head, cell=True)]
    header = ["", *sides_shown, "delta", "verdict", "test", "p", "p adj."]
    lines = _table(header, ["---", "---:", "---:", "---:", "---", "---", "---:", "---:"], rows)
    lacking = [
        f"- {inline(axis.replace('_', ' '))}: no verdict, {inline(str(change['needed']), 300)}"
        for axis, change in (body.get("axes") or {}).items()
        if change.get("verdict") == "insufficient_evidence" and change.get("needed")
    ]
    if lacking:
        lines += ["", *lacking]
    least = body.get("min_effect") or 0
    if least:
        lines += ["", f"A verdict also needs the axis to move by at least {least:g} points."]
    moved = moved_tasks(body)
    if moved:
        shown = [
            [
                code(str(t["task_id"]), cell=True),
                str(t["change"]),
                tally(t, "base"),
                tally(t, "head"),
            ]
            for t in moved[:MOVED_ROWS]
        ]
        lines += ["", "Tasks that moved:", ""]
        align = ["---", "---", "---:", "---:"]
        lines += _table(["task", "change", *sides_shown], align, shown)
        if len(moved) > MOVED_ROWS:
            lines += ["", f"… and {len(moved) - MOVED_ROWS} more."]
    if facts.agent_id is not None:
        page = links.page(f"{_path('agents', facts.agent_id, 'compare')}?{urlencode(facts.asked)}")
        if page is not None:
            lines += ["", f"[The compare in the dashboard]({page})"]
    return lines


def compare_markdown(facts: CompareFacts, links: Links) -> str:
    """`badge-collector compare --markdown`: the verdict, then the table."""
    base, head = sides(facts.body)
    regressed = bool(facts.body.get("regressed"))
    verdict = "regressed" if regressed else "no regression"
    title = f"## {'❌' if regressed else '✅'} {inline(facts.agent)} {inline(base)} → "
    lines = [title + f"{inline(head)}: {verdict}", "", *compare_section(facts, links)]
    return "\n".join(lines) + "\n"


def _headline(facts: ScreeningFacts) -> list[str]:
    document = facts.document or {}
    version = f" {inline(facts.version)}" if facts.version else ""
    lines = [
        f"## {_icon(facts.exit_code)} {inline(facts.agent)}{version}: {inline(facts.outcome, 500)}",
        "",
        f"Screening {code(facts.screening_id)} of suite {code(facts.suite_name)} "
        f"({code(facts.suite_digest[:12])}): {len(facts.tasks)} tasks × {facts.rounds} rounds "
        f"in {facts.elapsed_s:.1f} s; {len(facts.failed_tasks)} of {len(facts.tasks)} tasks "
        "failed at least one round.",
        "",
    ]
    if not document:
        return lines + [
            "The collector's scores could not be read: what follows is what the screener saw.",
            "",
        ]
    runs = (
        f"{document.get('total_runs')} ({document.get('completed_runs')} completed, "
        f"{document.get('successful_runs')} successful)"
    )
    lines += _table(
        ["composite", "verified", "pass^1", "pass^3", "pass^5", "runs"],
        ["---:", "---", "---:", "---:", "---:", "---:"],
        [
            [
                f"**{num(document.get('composite_score'))}**",
                inline(facts.verified_state or "-"),
                num(document.get("pass_1"), 3),
                num(document.get("pass_3"), 3),
                num(document.get("pass_5"), 3),
                runs,
            ]
        ],
    )
    radar = document.get("radar") or {}
    lines += [""] + _table(
        [axis.replace("_", " ") for axis in AXES],
        ["---:"] * len(AXES),
        [[num(radar.get(axis), 1) for axis in AXES]],
    )
    return lines + [""]


def _grouped(rounds: tuple[RoundFacts, ...]) -> list[tuple[list[int], RoundFacts]]:
    """Failed rounds that ended alike (same cause, output and reason) as one group: a
    deterministic agent gives the same wrong answer every round."""
    groups: dict[tuple[str, str | None, str | None], tuple[list[int], RoundFacts]] = {}
    for r in rounds:
        groups.setdefault((r.cause, r.output, r.detail), ([], r))[0].append(r.round)
    return list(groups.values())


def _details(task: TaskFacts, links: Links) -> str:
    summary = html_text(f"{task.task_id}: {task.summary()}", 400)
    lines = [f"<details><summary>{summary}</summary>", "", f"grader {code(task.grader)}", ""]
    if task.expected is not None:
        lines += ["expected:", "", block(task.expected), ""]
    for numbers, r in _grouped(task.failed):
        which = ", ".join(str(n) for n in numbers)
        run = links.page(_path("runs", r.run_id)) if r.run_id else None
        said = f"round{'s' if len(numbers) > 1 else ''} {which}: {r.cause}"
        lines.append(_link(said, run) + (f": {inline(r.detail, 300)}" if r.detail else ""))
        lines.append("")
        if r.output is not None:
            lines += [block(r.output), ""]
    return "\n".join([*lines, "</details>"])


def _failed_section(facts: ScreeningFacts, links: Links) -> list[str]:
    failed = sorted(facts.failed_tasks, key=lambda t: (-len(t.failed), t.task_id))
    if not failed:
        return []
    lines = [f"### {len(failed)} of {len(facts.tasks)} tasks failed", ""]
    spent = 0
    for index, task in enumerate(failed):
        details = _details(task, links)
        spent += len(details.encode())
        if spent > DETAILS_BUDGET_BYTES:
            rest = failed[index:]
            named = ", ".join(code(t.task_id) for t in rest[:NAMED_PAST_BUDGET])
            more = len(rest) - NAMED_PAST_BUDGET
            lines.append(
                f"Not shown here (the JUnit report has them): {named}"
                + (f" and {more} more" if more > 0 else "")
            )
            break
        lines += [details, ""]
    return lines


def _certificate_section(facts: ScreeningFacts) -> list[str]:
    certificate = facts.certificate
    if certificate is None:
        return []
    return [
        "### Certificate",
        "",
        f"The collector signed this screening: {code(certificate.path)}, statement digest "
        f"{code(certificate.statement_digest)}. Check it with",
        "",
        block(certificate.verify_command, "sh"),
        "",
    ]


def screening_markdown(facts: ScreeningFacts, links: Links) -> str:
    """The headline and scores, the compare, the certificate, then the failed tasks."""
    lines = _headline(facts)
    if facts.compare is not None:
        base, _ = sides(facts.compare.body)
        lines += [
            f"### Compared with {inline(base)}",
            "",
            *compare_section(facts.compare, links),
            "",
        ]
    lines += _certificate_section(facts)
    if facts.agent_id is not None:
        screening = links.page(_path("agents", facts.agent_id, "screenings", facts.screening_id))
        if screening is not None:
            lines += [f"[The screening in the dashboard]({screening})", ""]
    lines += _failed_section(facts, links)
    if facts.notes:
        lines += ["Notes:", "", *(f"- {inline(note, 1000)}" for note in facts.notes)]
    return "\n".join(lines).rstrip("\n") + "\n"
