"""The Markdown report of a screening and of a compare (issue 41), rendered as GitHub
renders a job summary (CommonMark with raw HTML and tables, markdown-it-py), so a test
sees what a reviewer would: one collapsed block per failed task, an agent's answer as
code and never as markup, a summary that stays under GitHub's 1 MiB."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from collector.reports.facts import CertificateFacts, Links, RoundFacts, TaskFacts
from collector.reports.markdown import compare_markdown, screening_markdown
from collector.reports.text import TEXT_LIMIT, cut
from tests.collector.report_facts import HOSTILE, compared, screening, task

GITHUB = MarkdownIt("commonmark", {"html": True}).enable("table")
NO_LINKS = Links(None)
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary over 1 MiB


def html(markdown: str) -> str:
    """The page, its cells' alignment left out so tests read the cells."""
    return re.sub(r"<(t[dh]) style=\"text-align:\w+\">", r"<\1>", GITHUB.render(markdown))


def test_the_headline_says_the_verdict_scores_and_radar_then_the_failed_tasks() -> None:
    facts = screening(
        task("greet", "passed", "passed", "passed"),
        task("refund", "failed", "failed", "failed", output="within 14 days"),
        exit_code=1,
        outcome="regressed against 1.0: correctness (p adj. 0.0078)",
        compare=compared(correctness="regressed"),
    )
    markdown = screening_markdown(facts, NO_LINKS)
    first = markdown.splitlines()[0]
    assert first == "## ❌ support-bot 2.0: regressed against 1.0: correctness (p adj. 0.0078)"
    page = html(markdown)
    assert "<strong>81.50</strong>" in page and "<td>verified</td>" in page
    assert re.search(r"<td>0\.800</td>\s*<td>0\.700</td>\s*<td>0\.000</td>", page)
    assert re.search(r"<td>80\.0</td>\s*<td>100\.0</td>\s*<td>-</td>", page)  # radar, no cost
    assert "<td><strong>regressed</strong></td>" in page and "<td>0.007827</td>" in page
    assert re.search(r"<td><code>refund</code></td>\s*<td>broken</td>", page)
    assert "### 1 of 2 tasks failed" in markdown
    assert page.count("<details>") == 1 and "refund: 3 of 3 rounds failed" in page
    # one block for the three rounds that answered alike
    assert markdown.count("rounds 1, 2, 3: wrong_answer") == 1
    assert page.count("within 14 days") == 1 and '<pre><code class="language-text">right' in page


def test_a_clean_screening_and_an_incomplete_one_have_their_own_icons() -> None:
    clean = screening_markdown(screening(task("greet", "passed")), NO_LINKS)
    assert clean.startswith("## ✅ support-bot 2.0: screened\n") and "<details>" not in clean
    lost = screening(task("greet", "missing"), exit_code=2, outcome="incomplete", document=None)
    text = screening_markdown(lost, NO_LINKS)
    assert text.startswith("## ⚠️ ") and "what follows is what the screener saw" in text
    assert "composite" not in text


def test_an_agents_answer_renders_as_code_and_never_as_markup() -> None:
    facts = screening(
        task("refund|`x`", "failed", output=HOSTILE, expected="**right** <i>x</i>"),
        task("greet", "failed", output="plain"),
        version="<img src=x onerror=alert(1)>",
    )
    page = html(screening_markdown(facts, NO_LINKS))
    assert "<script>" not in page and "<img" not in page and "<i>" not in page
    assert page.count("<details>") == 2 and page.count("</details>") == 2
    blocks = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", page, re.S)
    assert any("&lt;/details&gt;" in b and "```" in b and "\\x00" in b for b in blocks)
    assert any("**right** &lt;i&gt;x&lt;/i&gt;" in b for b in blocks)
    assert "\u202e" not in page and "\\u202e" in page  # a right-to-left override is shown


def test_a_task_id_with_pipes_and_backticks_stays_in_its_table_cell() -> None:
    facts = compared(correctness="regressed")
    facts.body["tasks"][0]["task_id"] = "a|b`c"
    page = html(compare_markdown(facts, NO_LINKS))
    [row] = re.findall(r"<tr>\s*<td><code>a\|b`c</code></td>.*?</tr>", page, re.S)
    assert row.count("<td>") == 4


def test_the_summary_stays_under_githubs_limit_with_thousands_of_failed_tasks() -> None:
    answer = cut("x" * 5000)
    failing = [task(f"task-{i:05d}", "failed", "failed", output=answer) for i in range(3000)]
    markdown = screening_markdown(screening(*failing), NO_LINKS)
    assert len(markdown.encode()) < STEP_SUMMARY_LIMIT
    assert "### 3000 of 3000 tasks failed" in markdown
    shown = markdown.count("<details>")
    assert 100 < shown < 3000
    assert f"and {3000 - shown - 100} more" in markdown  # the next 100 are named
    assert f"`task-{shown:05d}`" in markdown.split("Not shown here")[1]
    assert answer.count("x") == TEXT_LIMIT and "[cut at 2,000 of 5,000 characters]" in markdown


def test_links_go_to_the_dashboard_only_when_its_address_is_known() -> None:
    certificate = CertificateFacts(
        "out/cert.json", "d" * 64, "badge-collector verify out/cert.json"
    )
    rounds = (RoundFacts(1, "failed", "none", "no", None, "run/1", 3.0),)
    facts = screening(
        TaskFacts("refund", "exact", "yes", rounds, 3.0),
        compare=compared(correctness="regressed"),
        certificate=certificate,
    )
    without = screening_markdown(facts, NO_LINKS)
    assert "http" not in without
    linked = screening_markdown(facts, Links("https://badge.example/"))
    assert "(https://badge.example/agents/agent-1/screenings/s-1)" in linked
    assert "(https://badge.example/agents/agent-1/compare?base=1.0)" in linked
    assert "[round 1: wrong_answer](https://badge.example/runs/run%2F1)" in linked
    for text in (without, linked):
        assert f"statement digest `{'d' * 64}`" in text
        assert "```sh\nbadge-collector verify out/cert.json\n```" in text


def test_a_compare_report_names_both_versions_and_what_moved() -> None:
    regressed = compare_markdown(compared(correctness="regressed"), NO_LINKS)
    assert regressed.startswith("## ❌ support-bot 1.0 → 2.0: regressed\n")
    unchanged = compare_markdown(compared(), NO_LINKS)
    assert unchanged.startswith("## ✅ support-bot 1.0 → 2.0: no regression\n")
    page = html(regressed)
    assert re.search(r"<td>composite</td>\s*<td>100\.00</td>\s*<td>80\.00</td>", page)
    lacking = compare_markdown(compared(robustness="insufficient_evidence"), NO_LINKS)
    assert "- robustness: no verdict, 5 paired tasks with 2 runs each\n" in lacking
    assert "Tasks that moved" in page and "greet" not in page
