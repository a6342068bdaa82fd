"""Screenings in a real browser (SCREEN.md section 7): two screenings of one suite,
recorded by `badge-collector screen` against an instrumented HTTP agent, as
the overview, the screening page, a run's evidence and the compare show them.
Each page must say what the API says."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from bench.support.servers import cli, start_server
from scoring import grade, norm
from tests.dashboard.conftest import Live, screenshot
from tests.dashboard.screened import (
    HOSTILE_SCREENING,
    HOSTILE_TASK,
    HOSTILE_VERSION,
    PAYLOAD,
    ROUNDS,
    TASKS,
    Screenings,
    agent_app,
    screen,
    screened,
    write_suite,
)
from tests.dashboard.test_compare_page import assert_fits_at_desktop_widths
from tests.dashboard.test_pages import no_page_errors
from tests.screening_agent import serving
from tests.waiting import wait_for

AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")
DOCS = Path(__file__).parents[2] / "docs"


@pytest.fixture(scope="module")
def screenings(live: Live, tmp_path_factory: pytest.TempPathFactory) -> Screenings:
    return screened(live, tmp_path_factory.mktemp("suite"))


def documented(driver: webdriver.Chrome, name: str) -> None:
    """A screenshot under build/screenshots; with BADGE_DOCS_SCREENSHOTS=1 also the
    one docs/ shows (docs/dashboard-NAME.png)."""
    driver.execute_script("window.scrollTo(0, 0)")
    path = screenshot(driver, name)
    if os.environ.get("BADGE_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(path, DOCS / f"dashboard-{name}.png")


def rows_by_task(driver: webdriver.Chrome) -> dict[str, WebElement]:
    return {
        row.get_attribute("data-task") or "": row
        for row in driver.find_elements(By.CSS_SELECTOR, "#grid tbody tr[data-task]")
    }


def screening_url(live: Live, s: Screenings, screening: str) -> str:
    return f"{live.url}/agents/{s.agent_id}/screenings/{screening}"


def owner(live: Live) -> dict[str, str]:
    return {"authorization": f"Bearer {live.key}"}


def test_the_overview_lists_both_screenings_with_the_apis_counts(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    listed = live.api(f"/agents/{screenings.agent_id}/screenings")["items"]
    assert [s["screening_id"] for s in listed] == ["shop-2", "shop-1"]
    assert [s["total_runs"] for s in listed] == [len(TASKS) * ROUNDS] * 2
    browser.get(f"{live.url}/agents/{screenings.agent_id}")
    rows = browser.find_elements(By.CSS_SELECTOR, "#screenings tbody tr[data-screening-id]")
    assert [r.get_attribute("data-screening-id") for r in rows] == ["shop-2", "shop-1"]
    for row, item in zip(rows, listed, strict=True):
        cells = {
            name: row.find_element(By.CSS_SELECTOR, f"td.{name}").text
            for name in ("runs", "passed", "composite")
        }
        assert cells == {
            "runs": str(item["total_runs"]),
            "passed": str(item["successful_runs"]),
            "composite": f"{item['composite_score']:,.2f}",
        }
        assert item["suite_name"] in row.text and item["version"] in row.text
    assert listed[0]["successful_runs"] < listed[1]["successful_runs"]  # 1.1.0 is worse
    screenshot(browser, "overview-screenings")
    rows[1].find_element(By.TAG_NAME, "a").click()
    assert browser.current_url == screening_url(live, screenings, "shop-1")
    no_page_errors(browser)


@pytest.mark.parametrize("screening", ["shop-1", "shop-2"])
def test_the_grid_shows_the_apis_outcome_in_every_cell(
    live: Live, browser: webdriver.Chrome, screenings: Screenings, screening: str
) -> None:
    document = screenings.first if screening == "shop-1" else screenings.second
    browser.get(screening_url(live, screenings, screening))
    rows = rows_by_task(browser)
    assert list(rows) == [t["task_id"] for t in document["tasks"]]
    for task in document["tasks"]:
        cells = rows[task["task_id"]].find_elements(By.CSS_SELECTOR, "td.cell")
        texts = [cell.text for cell in cells]
        assert len(texts) == ROUNDS
        for text, outcome in zip(texts, task["outcomes"], strict=True):
            if outcome is True:
                assert text == "pass"
            else:
                assert outcome is False and text != "pass", (task["task_id"], texts)
        # a failed cell names its error class, or "fail" when the agent answered
        shown = Counter("none" if t in ("pass", "fail") else t for t in texts)
        assert shown == Counter(task["error_classes"]), task["task_id"]
        for cell in cells:
            run_id = cell.find_element(By.TAG_NAME, "a").get_attribute("href").rsplit("/", 1)[1]
            run = live.api(f"/runs/{run_id}")
            assert (run["screening_id"], run["task_id"]) == (screening, task["task_id"])
    passk = [dd.text for dd in browser.find_elements(By.CSS_SELECTOR, "#passk dd")]
    assert passk == [f"{document[k]:.3f}" for k in ("pass_1", "pass_3", "pass_5")]
    dots = {
        d.get_attribute("data-axis"): float(d.get_attribute("data-value") or "nan")
        for d in browser.find_elements(By.CSS_SELECTOR, "#radar circle.dot")
    }
    radar = document["radar"]
    assert dots == {axis: radar[axis] for axis in AXES if radar[axis] is not None}
    assert browser.find_element(By.ID, "composite").text == f"{document['composite_score']:.2f}"
    [sibling] = browser.find_elements(By.CSS_SELECTOR, "#siblings a")
    query = parse_qs(urlsplit(sibling.get_attribute("href") or "").query)
    assert query == {"base_screening": ["shop-1"], "head_screening": ["shop-2"]}
    no_page_errors(browser)
    if screening == "shop-2":
        documented(browser, "screening")


def refund_run(live: Live, screenings: Screenings, browser: webdriver.Chrome) -> str:
    """Round 1 of task refund in shop-1, through its cell on the screening page."""
    browser.get(screening_url(live, screenings, "shop-1"))
    cell = rows_by_task(browser)["refund"].find_element(By.CSS_SELECTOR, "td[data-round='1'] a")
    return (cell.get_attribute("href") or "").rsplit("/", 1)[1]


def test_the_run_page_marks_the_words_the_grader_found_and_missed(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    run_id = refund_run(live, screenings, browser)
    task = next(t for t in TASKS if t["id"] == "refund")
    graded = grade("fuzzy", task["metadata"]["answer"], task["expected_output"], "none")
    assert graded.found and graded.missed  # the task was chosen to have both
    evidence = live.http.get(f"{live.url}/api/v1/runs/{run_id}/evidence", headers=owner(live))
    assert evidence.status_code == 200, evidence.text
    body = evidence.json()
    assert (body["found"], body["missed"]) == (list(graded.found), list(graded.missed))
    assert body["prompt"] == task["prompt"] and body["output"] == task["metadata"]["answer"]
    browser.get(f"{live.url}/runs/{run_id}")
    # anyone sees the grader, score, status and error class; no text the run wrote
    public = {
        name: browser.find_element(By.ID, f"evidence-{name}").text
        for name in ("grader", "score", "status", "error")
    }
    assert public == {"grader": "fuzzy", "score": f"{graded.score:.3f}", "status": "200",
                      "error": "none"}  # fmt: skip
    assert browser.find_element(By.ID, "evidence-withheld").is_displayed()
    for secret in (task["metadata"]["answer"], task["prompt"], task["expected_output"]):
        assert secret not in browser.page_source
    screenshot(browser, "run-evidence-public")
    browser.find_element(By.ID, "trace-key").send_keys(live.key + Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "evidence-output"))
    output = browser.find_element(By.ID, "evidence-output")
    assert output.text == task["metadata"]["answer"]
    marked = {norm(m.text) for m in output.find_elements(By.CSS_SELECTOR, "mark.found")}
    assert marked == set(graded.found)
    expected = browser.find_element(By.ID, "evidence-expected")
    assert expected.text == task["expected_output"]
    assert {norm(m.text) for m in expected.find_elements(By.CSS_SELECTOR, "mark.found")} == set(
        graded.found
    )
    assert {norm(m.text) for m in expected.find_elements(By.CSS_SELECTOR, ".missed")} == set(
        graded.missed
    )
    listed = {
        kind: [c.text for c in browser.find_elements(By.CSS_SELECTOR, f"#words-{kind} code")]
        for kind in ("found", "missed")
    }
    assert listed == {"found": list(graded.found), "missed": list(graded.missed)}
    assert browser.find_element(By.ID, "evidence-prompt").text == task["prompt"]
    assert browser.find_element(By.CSS_SELECTOR, ".words-legend mark").text == "found"
    # the waterfall below: the agent's own spans under the screener's root
    run = live.api(f"/runs/{run_id}")
    WebDriverWait(browser, 10).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#trace li.span")) == run["span_count"]
    )
    tools = browser.find_elements(By.CSS_SELECTOR, "#trace li.span.counted[data-role='tool']")
    assert len(tools) == run["steps"] == len(task["metadata"]["tools"])
    evidence_at = browser.find_element(By.ID, "evidence").location["y"]
    assert evidence_at < browser.find_element(By.ID, "trace").location["y"]
    no_page_errors(browser)
    documented(browser, "run-evidence")


def test_the_grade_card_and_the_evidence_card_agree(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    """A screener's grade comes from its root span, which has no score or error
    class of a posted grade: the Grade card showed "–" where the Evidence card
    below showed the score and `none`."""
    run_id = refund_run(live, screenings, browser)
    run = live.api(f"/runs/{run_id}")
    assert run["grade"] is not None and run["grade"]["score"] is None
    browser.get(f"{live.url}/runs/{run_id}")

    def cards() -> tuple[tuple[str, str], tuple[str, str]]:
        pick = browser.find_element
        return (
            (pick(By.ID, "grade-score").text, pick(By.ID, "grade-error-class").text),
            (pick(By.ID, "evidence-score").text, pick(By.ID, "evidence-error").text),
        )

    grade_card, evidence_card = cards()
    assert grade_card == evidence_card and evidence_card[1] == "none"
    assert evidence_card[0] not in ("", "–")
    browser.find_element(By.ID, "trace-key").send_keys(live.key + Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "evidence-output"))
    assert cards()[0] == cards()[1]  # still, once the owner's evidence has loaded
    no_page_errors(browser)


def test_pass_5_on_a_three_round_screening_says_it_needs_five_runs_a_task(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    assert screenings.first["pass_5"] == 0.0 and ROUNDS == 3
    browser.get(screening_url(live, screenings, "shop-1"))
    tasks = len(screenings.first["tasks"])
    assert browser.find_element(By.ID, "pass-k-note").text == (
        f"pass^5 needs 5 runs a task: {tasks} of the {tasks} tasks counted have fewer, "
        "and count 0 there."
    )


def test_the_evidence_is_the_owners(live: Live, screenings: Screenings) -> None:
    run_id = live.api("/runs", screening="shop-1")["items"][0]["id"]
    url = f"{live.url}/api/v1/runs/{run_id}/evidence"
    assert live.http.get(url).status_code == 401
    other = cli("keys", "create", "--owner", "someone-else", "--database-url", live.database_url)
    refused = live.http.get(url, headers={"authorization": f"Bearer {other.stdout.strip()}"})
    assert refused.status_code == 403
    assert live.http.get(url, headers=owner(live)).status_code == 200
    demo_run = live.api("/runs", agent_id=live.agent("support-bot")["id"])["items"][0]["id"]
    unscreened = live.http.get(f"{live.url}/api/v1/runs/{demo_run}/evidence", headers=owner(live))
    assert unscreened.status_code == 404


def test_the_compare_of_the_two_screenings_shows_the_apis_regression(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    ident = screenings.agent_id
    result = live.api(f"/agents/{ident}/compare", base_screening="shop-1", head_screening="shop-2")
    assert result["regressed"] is True
    browser.get(screening_url(live, screenings, "shop-2"))
    browser.find_element(By.CSS_SELECTOR, "#siblings a").click()
    assert browser.find_element(By.ID, "verdict").text.startswith("Regressed")
    for axis, change in result["axes"].items():
        row = browser.find_element(By.CSS_SELECTOR, f"#verdicts tr[data-axis='{axis}']")
        assert change["verdict"].replace("_", " ") in row.text
        adjusted = row.find_element(By.CSS_SELECTOR, "td.adjusted").text
        assert adjusted == ("–" if change["p_adjusted"] is None else f"{change['p_adjusted']:.4f}")
    assert result["axes"]["correctness"]["verdict"] == "regressed"
    moved = {
        row.get_attribute("data-task"): row.text
        for row in browser.find_elements(By.CSS_SELECTOR, "#tasks tbody tr")
    }
    assert moved.keys() == {t["task_id"] for t in result["tasks"] if t["change"] != "same"}
    assert "broken" in moved["refund"]
    for side, value in (("base", "s:shop-1"), ("head", "s:shop-2")):
        picked = Select(browser.find_element(By.ID, side)).first_selected_option
        assert picked.get_attribute("value") == value
    assert "screening shop-1 (1.0.0)" in browser.find_element(By.ID, "sides").text
    no_page_errors(browser)
    documented(browser, "compare-screenings")
    # the picker lists versions beside screenings: version 1.0.0 against shop-2
    Select(browser.find_element(By.ID, "base")).select_by_value("v:1.0.0")
    browser.find_element(By.CSS_SELECTOR, ".picker button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda d: "base=1.0.0" in d.current_url)
    assert parse_qs(urlsplit(browser.current_url).query) == {
        "base": ["1.0.0"],
        "head_screening": ["shop-2"],
    }
    mixed = live.api(f"/agents/{ident}/compare", base="1.0.0", head_screening="shop-2")
    verdict = browser.find_element(By.ID, "verdict").text
    assert verdict.startswith("Regressed" if mixed["regressed"] else "No regression")
    # the per-axis table, p-values included, inside its card on common desktops
    page = f"{live.url}/agents/{ident}/compare?base_screening=shop-1&head_screening=shop-2"
    assert_fits_at_desktop_widths(browser, page)


def injected(driver: webdriver.Chrome) -> list[str]:
    """Elements or attributes the payload would have made had it been parsed as markup
    (the agent page's own badge image aside)."""
    found: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll("
        "'main script, main img:not(#badge-img), main svg[onload], [onerror], [onload], "
        'a[href^="javascript"]\''
        ")).map(e => e.outerHTML.slice(0, 80))"
    )
    return found


def test_a_hostile_agent_output_renders_as_text_everywhere(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    ident = screenings.hostile_agent_id
    runs = live.api("/runs", screening="evil-1", task_id=HOSTILE_TASK)["items"]
    assert runs, "the hostile task's run"
    browser.get_log("browser")  # what earlier tests left in the log is theirs
    pages = [
        "/",
        f"/agents/{ident}",
        f"/agents/{ident}/screenings",
        f"/agents/{ident}/screenings/evil-1",
        f"/agents/{ident}/screenings/evil-2",
        f"/agents/{ident}/compare?base_screening=evil-1&head_screening=evil-2",
        f"/agents/{ident}/compare",
        f"/agents/{ident}/runs",
        f"/runs/{runs[0]['id']}",
    ]
    for path in pages:
        browser.get(live.url + path)
        main = browser.find_element(By.TAG_NAME, "main").text
        if path.startswith("/runs/"):
            browser.find_element(By.ID, "trace-key").send_keys(live.key + Keys.ENTER)
            WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "evidence-output"))
            assert browser.find_element(By.ID, "evidence-output").text == PAYLOAD
            sent = browser.find_element(By.ID, "evidence-request").get_attribute("textContent")
            assert json.loads(sent or "{}")["metadata"]["answer"] == PAYLOAD
            names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#trace .name")]
            assert f"plan {PAYLOAD[:40]}" in names
        elif "/screenings/" in path or path.endswith("/runs"):
            assert HOSTILE_TASK in main, path
        if path.endswith("/screenings") or "evil-2" in path:
            assert HOSTILE_VERSION in main, path
        assert browser.execute_script("return window.__pwned === undefined"), path
        assert injected(browser) == [], path
        no_page_errors(browser)
    # a screening id no `screen` makes, but a span may: listed as text, its link opens it
    browser.get(f"{live.url}/agents/{ident}/screenings")
    rows = browser.find_elements(By.CSS_SELECTOR, "#screenings tbody tr[data-screening-id]")
    [row] = [r for r in rows if r.get_attribute("data-screening-id") == HOSTILE_SCREENING]
    row.find_element(By.TAG_NAME, "a").click()
    assert browser.find_element(By.CSS_SELECTOR, "h1 code").text == HOSTILE_SCREENING
    assert rows_by_task(browser).keys() == {"plain"}
    assert browser.execute_script("return window.__pwned === undefined")
    assert injected(browser) == []
    no_page_errors(browser)


def test_the_new_pages_are_small_labelled_and_fit_a_phone(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    ident = screenings.agent_id
    paths = [
        f"/agents/{ident}/screenings",
        f"/agents/{ident}/screenings/shop-2",
        f"/agents/{ident}/compare?base_screening=shop-1&head_screening=shop-2",
        f"/runs/{live.api('/runs', screening='shop-2')['items'][0]['id']}",
    ]
    assets = sum(
        len(live.http.get(f"{live.url}/assets/{name}").content)
        for name in ("dashboard.css", "dashboard.js")
    )
    browser.set_window_size(390, 844)
    try:
        for path in paths:
            reply = live.http.get(live.url + path)
            assert reply.status_code == 200 and "content-security-policy" in reply.headers
            assert len(reply.content) + assets < 300 * 1024
            browser.get(live.url + path)
            unlabelled = browser.execute_script(
                "return Array.from(document.querySelectorAll('input:not([type=hidden]), select'))"
                ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))"
                ".map(e => e.id || e.name)"
            )
            assert unlabelled == [], path
            overflow = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{path} is {overflow}px wider than a phone"
    finally:
        browser.set_window_size(1280, 1000)


def test_an_unknown_screening_is_an_html_404(live: Live, screenings: Screenings) -> None:
    reply = live.http.get(f"{live.url}/agents/{screenings.agent_id}/screenings/nope")
    assert reply.status_code == 404 and reply.headers["content-type"].startswith("text/html")
    assert "unknown screening" in reply.text


def test_under_insecure_the_run_page_shows_the_evidence_without_a_key(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    server = start_server(tmp_path / "open.db", "--insecure")
    http = httpx.Client(timeout=30)
    try:
        collector = f"http://127.0.0.1:{server.http_port}"
        task = next(t for t in TASKS if t["id"] == "refund")
        app, _ = agent_app(collector, None)
        with serving(app) as url:
            screen(collector, write_suite(tmp_path, [task], 1), url, None, "1.0.0", "open-1")
        deadline = time.monotonic() + 30
        while not (runs := http.get(f"{collector}/api/v1/runs?screening=open-1").json()["items"]):
            assert time.monotonic() < deadline, "the screened run did not arrive"
            time.sleep(0.2)
        browser.get(f"{collector}/runs/{runs[0]['id']}")
        assert not browser.find_elements(By.ID, "trace-key")  # no key asked for
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "evidence-output"))
        output = browser.find_element(By.ID, "evidence-output")
        assert output.text == task["metadata"]["answer"]
        graded = grade("fuzzy", output.text, task["expected_output"], "none")
        assert {norm(m.text) for m in output.find_elements(By.TAG_NAME, "mark")} == set(
            graded.found
        )
        assert http.get(f"{collector}/api/v1/runs/{runs[0]['id']}/evidence").status_code == 200
    finally:
        http.close()
        server.stop()


def test_an_incomplete_screening_says_so_and_shows_every_planned_cell(
    live: Live, browser: webdriver.Chrome, screenings: Screenings
) -> None:
    """A screener that recorded its plan and died after one dispatch (issue 37 item 5):
    the list marks the screening, its page says how much is stored and how to resume,
    and the grid has a row for every planned task, the missing cells empty."""
    from bench.support.otlp import new_span_id, new_trace_id, request, span

    grader = {"authorization": f"Bearer {screenings.grader}"}
    plan = {
        "agent": "planned-bot",
        "screening_id": "cut-short",
        "suite_name": "shop",
        "rounds": ROUNDS,
        "tasks": [t["id"] for t in TASKS],
    }
    made = live.http.post(f"{live.url}/api/v1/screenings", json=plan, headers=grader)
    assert made.status_code == 201, made.text
    trace_id, root, now = new_trace_id(), new_span_id(), time.time_ns()
    attributes = {
        "badge.task.id": "refund",
        "badge.run.id": "cut-short/refund/1",
        "badge.run.success": True,
        "badge.screening.id": "cut-short",
        "badge.screening.round": 1,
    }
    spans = [span(trace_id, root, "badge.run", start=now - 10**8, end=now, attributes=attributes)]
    sent = live.http.post(
        f"{live.url}/v1/traces",
        content=request(spans, "planned-bot").SerializeToString(),
        headers={"content-type": "application/x-protobuf", **grader},
    )
    assert sent.status_code == 200, sent.text
    agent_id = made.json()["agent_id"]

    def cut_short() -> Any:  # its document once the run sent is stored, as the page counts it
        reply = live.http.get(f"{live.url}/api/v1/agents/{agent_id}/screenings/cut-short")
        return reply.json() if reply.status_code == 200 else reply.status_code

    wait_for(
        cut_short,
        until=lambda found: isinstance(found, dict) and found["stored_runs"] == 1,
        what="the agent of the screening and its one stored run",
    )
    planned = len(TASKS) * ROUNDS
    browser.get(f"{live.url}/agents/{agent_id}/screenings")
    [row] = browser.find_elements(By.CSS_SELECTOR, "#screenings tr[data-screening-id='cut-short']")
    assert "incomplete" in row.text
    row.find_element(By.TAG_NAME, "a").click()
    notice = browser.find_element(By.ID, "incomplete").text
    assert f"1 of {planned} planned runs are stored" in notice and "--resume" in notice
    assert browser.find_element(By.ID, "planned").text == f"1 of {planned} stored"
    rows = rows_by_task(browser)
    assert sorted(rows) == sorted(t["id"] for t in TASKS)
    texts = {
        task: [c.text for c in r.find_elements(By.CSS_SELECTOR, "td.cell")]
        for task, r in rows.items()
    }
    assert texts["refund"] == ["pass", "–", "–"]
    assert all(cells == ["–"] * ROUNDS for task, cells in texts.items() if task != "refund")
    no_page_errors(browser)
    # An id no `screen` makes, from a grader's own harness, opens from its link too.
    odd = "team/ünï cöde 50%"
    trace_id, root, now = new_trace_id(), new_span_id(), time.time_ns()
    odd_attributes = {**attributes, "badge.screening.id": odd, "badge.run.id": f"{odd}/refund/1"}
    odd_spans = [
        span(trace_id, root, "badge.run", start=now - 10**8, end=now, attributes=odd_attributes)
    ]
    sent = live.http.post(
        f"{live.url}/v1/traces",
        content=request(odd_spans, "planned-bot").SerializeToString(),
        headers={"content-type": "application/x-protobuf", **grader},
    )
    assert sent.status_code == 200, sent.text
    deadline = time.monotonic() + 30
    while odd not in {
        s["screening_id"] for s in live.api(f"/agents/{agent_id}/screenings")["items"]
    }:
        assert time.monotonic() < deadline, "the odd screening did not appear"
        time.sleep(0.2)
    browser.get(f"{live.url}/agents/{agent_id}/screenings")
    link = browser.find_element(By.CSS_SELECTOR, f"#screenings tr[data-screening-id='{odd}'] a")
    link.click()
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Screening {odd}"
    assert list(rows_by_task(browser)) == ["refund"]
    no_page_errors(browser)
