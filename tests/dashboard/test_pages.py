"""The dashboard in a real browser, against a live collector the demo fed
through the OTel SDK exporter: each page shows what the read API says."""

from __future__ import annotations

import re
import time

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

from tests.dashboard.conftest import Live, screenshot
from tests.waiting import wait_for

AXES = ("correctness", "latency", "cost", "tool_efficiency", "robustness")


def shown(value: float | None) -> str:
    return "–" if value is None else f"{value:,.2f}"


def board_rows(driver: webdriver.Chrome) -> list[WebElement]:
    return driver.find_elements(By.CSS_SELECTOR, "#board tbody tr[data-agent-id]")


def board_order(driver: webdriver.Chrome) -> list[str]:
    return [row.get_attribute("data-agent-id") or "" for row in board_rows(driver)]


def composites(driver: webdriver.Chrome) -> dict[str, str]:
    return {
        row.get_attribute("data-agent-id") or "": row.find_element(
            By.CSS_SELECTOR, ".composite"
        ).text
        for row in board_rows(driver)
    }


def no_page_errors(driver: webdriver.Chrome) -> None:
    """Nothing failed to load and no script threw (the favicon aside)."""
    problems = [
        entry["message"]
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]
    ]
    assert problems == []


def test_the_leaderboard_lists_the_agents_in_the_apis_order(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get(live.url + "/")
    api = live.api("/agents")["items"]
    assert board_order(browser) == [a["id"] for a in api]
    assert composites(browser) == {a["id"]: shown(a["composite_score"]) for a in api}
    first = board_rows(browser)[0]
    stats = live.api(f"/agents/{api[0]['id']}/stats")
    assert f"{100 * stats['success_rate']:.1f}%" in first.text
    assert "self-reported" in first.text  # the demo's outcomes are the agents' own
    assert first.find_element(By.CSS_SELECTOR, "svg.spark polyline")  # composite over time
    no_page_errors(browser)
    screenshot(browser, "leaderboard")


def test_moving_a_slider_reorders_the_board_and_leaves_every_composite_as_it_was(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get(live.url + "/")
    canonical, before = board_order(browser), composites(browser)
    # the axis whose weight alone reorders these agents the most, from the API
    orders = {}
    for axis in AXES:
        scored = [
            (
                live.api(f"/agents/{ident}/fitness", weights=f"{axis}:1")["composite_score"],
                rank,
                ident,
            )
            for rank, ident in enumerate(canonical)
        ]
        scored.sort(key=lambda s: (s[0] is None, -(s[0] or 0.0), s[1]))
        orders[axis] = [ident for _, _, ident in scored]
    axis = next(a for a in AXES if orders[a] != canonical)  # the demo data has one
    for other in AXES:  # by keyboard: every other slider to 0, this one to 5
        slider = browser.find_element(By.ID, f"w-{other}")
        slider.send_keys(Keys.END if other == axis else Keys.HOME)
    WebDriverWait(browser, 10).until(lambda d: board_order(d) == orders[axis])
    assert composites(browser) == before  # the canonical numbers never move
    weighted = browser.find_elements(By.CSS_SELECTOR, "#board tbody td.weighted")
    assert [cell.text for cell in weighted] == [
        shown(live.api(f"/agents/{i}/fitness", weights=f"{axis}:1")["composite_score"])
        for i in orders[axis]
    ]
    assert browser.find_element(By.ID, f"v-{axis}").text == "5.0"
    no_page_errors(browser)
    screenshot(browser, "leaderboard-reranked")
    browser.get(live.url + "/")  # nothing was saved: a fresh visit is canonical again
    assert board_order(browser) == canonical


def test_the_overview_radar_has_five_axes_with_the_values_of_fitness(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("support-bot")
    browser.get(f"{live.url}/agents/{agent['id']}")
    fitness = live.api(f"/agents/{agent['id']}/fitness")
    cells = {
        cell.get_attribute("data-axis"): cell.text
        for cell in browser.find_elements(By.CSS_SELECTOR, "#axes td[data-axis]")
    }
    assert cells == {axis: shown(fitness[axis]) for axis in AXES}
    dots = browser.find_elements(By.CSS_SELECTOR, "#radar circle.dot")
    assert {
        d.get_attribute("data-axis"): float(d.get_attribute("data-value") or "nan") for d in dots
    } == {axis: fitness[axis] for axis in AXES if fitness[axis] is not None}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#radar line.spoke")) == 5
    stats = live.api(f"/agents/{agent['id']}/stats")
    assert browser.find_element(By.ID, "composite").text == shown(stats["composite_score"])
    note = browser.find_element(By.ID, "arith-note").text
    assert note.startswith(f"{100 * 0.4 * stats['success_rate']:.2f} + ")
    assert f"= {stats['composite_score']:.2f}" in note
    weakest = live.api(f"/agents/{agent['id']}/diagnostics")["weakest_axis"]
    assert browser.find_element(By.ID, "weakest").text.lower().replace(" ", "_") == weakest
    first_offender = browser.find_element(By.CSS_SELECTOR, "#improve .offenders a")
    assert first_offender.get_attribute("href").startswith(f"{live.url}/runs/")
    no_page_errors(browser)
    screenshot(browser, "overview")


def test_a_version_picked_on_the_overview_filters_every_number(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("support-bot")
    browser.get(f"{live.url}/agents/{agent['id']}")
    picker = browser.find_element(By.ID, "version")
    picker.find_element(By.CSS_SELECTOR, "option[value='1.5.0']").click()  # applies on change
    WebDriverWait(browser, 10).until(ready.url_contains("version=1.5.0"))
    stats = live.api(f"/agents/{agent['id']}/stats", version="1.5.0")
    fitness = live.api(f"/agents/{agent['id']}/fitness", version="1.5.0")
    assert browser.find_element(By.ID, "composite").text == shown(stats["composite_score"])
    latency = browser.find_element(By.CSS_SELECTOR, "#axes td[data-axis='latency']").text
    assert latency == shown(fitness["latency"])


def test_a_null_axis_says_how_many_runs_it_needs_and_is_never_drawn_as_zero(
    live: Live, browser: webdriver.Chrome
) -> None:
    """A new agent with three runs: too few latencies and no repeated task."""
    from bench.support.otlp import agent_run
    from bench.support.servers import OtlpClient

    client = OtlpClient(live.server, live.key)
    for task in ("a", "b", "c"):
        client.export(agent_run(task, service="fresh-agent").SerializeToString(), "http")
    client.close()
    deadline = time.monotonic() + 30
    while not any(a["name"] == "fresh-agent" for a in live.api("/agents")["items"]):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    agent = wait_for(  # all three runs in, not only the first
        lambda: live.agent("fresh-agent"),
        until=lambda found: found["total_runs"] == 3,
        what="fresh-agent's three runs",
    )
    fitness = live.api(f"/agents/{agent['id']}/fitness")
    assert fitness["latency"] is None and fitness["robustness"] is None
    browser.get(f"{live.url}/agents/{agent['id']}")
    latency = browser.find_element(By.CSS_SELECTOR, "#axes td[data-axis='latency']").text
    needed = fitness["evidence_needed"]["latency"]
    assert latency == f"no evidence yet: needs {needed} more runs" and needed == 2
    robustness = browser.find_element(By.CSS_SELECTOR, "#axes td[data-axis='robustness']").text
    assert robustness == "no evidence yet: needs 1 more run"
    drawn = {
        d.get_attribute("data-axis")
        for d in browser.find_elements(By.CSS_SELECTOR, "#radar circle.dot")
    }
    assert drawn == {"correctness", "cost", "tool_efficiency"}


def test_the_compare_page_shows_the_demos_regression(live: Live, browser: webdriver.Chrome) -> None:
    agent = live.agent("support-bot")
    browser.get(f"{live.url}/agents/{agent['id']}/compare")
    result = live.api(f"/agents/{agent['id']}/compare")
    assert result["regressed"] is True
    assert browser.find_element(By.ID, "verdict").text.startswith("Regressed")
    rows = {
        row.get_attribute("data-axis"): row.text
        for row in browser.find_elements(By.CSS_SELECTOR, "#verdicts tbody tr")
    }
    for axis, change in result["axes"].items():
        assert change["verdict"].replace("_", " ") in rows[axis]
        row = browser.find_element(By.CSS_SELECTOR, f"#verdicts tr[data-axis='{axis}']")
        adjusted = row.find_element(By.CSS_SELECTOR, "td.adjusted").text
        want = "–" if change["p_adjusted"] is None else f"{change['p_adjusted']:.4f}"
        assert adjusted == want, axis
    assert "regressed" in rows["latency"]
    # the evidence behind the latency verdict: every paired task, open on the page
    evidence = live.api(f"/agents/{agent['id']}/compare", evidence="true")["axes"]["latency"]
    shown = browser.find_element(By.CSS_SELECTOR, "details.evidence[data-axis='latency']")
    assert shown.get_attribute("open") is not None
    tasks = [r.get_attribute("data-task") for r in shown.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert sorted(tasks) == [pair["task_id"] for pair in evidence["pairs"]]
    broken = browser.find_element(By.CSS_SELECTOR, "#tasks tr[data-task='refund']").text
    assert "broken" in broken
    assert len(browser.find_elements(By.CSS_SELECTOR, "#radar-compare polygon.area")) == 2
    base = browser.find_element(By.ID, "base")
    assert base.find_element(By.CSS_SELECTOR, "option:checked").text == "1.4.0"
    no_page_errors(browser)
    screenshot(browser, "compare")


def test_the_run_page_shows_the_counted_tool_steps_and_with_the_key_the_trace(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("coder")
    runs = live.api("/runs", agent_id=agent["id"], page_size=50)["items"]
    chosen = max(runs, key=lambda r: r["steps"] or 0)
    detail = live.api(f"/runs/{chosen['id']}")
    browser.get(f"{live.url}/runs/{chosen['id']}")
    steps = browser.find_elements(By.CSS_SELECTOR, "#tool-steps li")
    assert [s.find_element(By.TAG_NAME, "code").text for s in steps] == [
        c["name"] for c in detail["tool_calls"]
    ]
    assert browser.find_element(By.ID, "steps").text == str(detail["steps"])
    # the trace is the owner's: a wrong key is refused, the right one loads it
    key = browser.find_element(By.ID, "trace-key")
    key.send_keys("bdg_wrong" + Keys.ENTER)
    WebDriverWait(browser, 10).until(
        lambda d: "Could not load" in d.find_element(By.ID, "trace-status").text
    )
    key.clear()
    key.send_keys(live.key + Keys.ENTER)
    WebDriverWait(browser, 10).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#trace li.span")) == detail["span_count"]
    )
    counted_tools = browser.find_elements(
        By.CSS_SELECTOR, "#trace li.span.counted[data-role='tool']"
    )
    assert len(counted_tools) == detail["steps"]
    # each span names the convention file and rule that classified it
    summary = counted_tools[0].find_element(By.CSS_SELECTOR, "details.more summary")
    assert re.search(r"convention [a-z0-9.-]+, rule tool\[\d+\]", summary.text), summary.text
    digest = browser.find_element(By.ID, "conventions-digest").text
    assert digest == detail["conventions_digest"] and len(digest) == 16
    assert live.key not in browser.current_url
    assert live.key not in (browser.execute_script("return document.cookie") or "")
    no_page_errors_but_the_refused_key(browser)
    screenshot(browser, "run")


def no_page_errors_but_the_refused_key(driver: webdriver.Chrome) -> None:
    problems = [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE"
        and "favicon.ico" not in e["message"]
        and "401" not in e["message"]
    ]
    assert problems == []


def test_the_evidence_list_filters_by_outcome_and_pages(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("support-bot")
    browser.get(f"{live.url}/agents/{agent['id']}/runs")
    listed = [
        r.get_attribute("data-run-id")
        for r in browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr[data-run-id]")
    ]
    assert listed == [
        r["id"] for r in live.api("/runs", agent_id=agent["id"], page_size=50)["items"]
    ]
    outcome = browser.find_element(By.ID, "f-outcome")
    outcome.find_element(By.CSS_SELECTOR, "option[value='failure']").click()
    browser.find_element(By.CSS_SELECTOR, ".filters button[type=submit]").click()
    WebDriverWait(browser, 10).until(ready.url_contains("outcome=failure"))
    failed = [
        r.get_attribute("data-run-id")
        for r in browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr[data-run-id]")
    ]
    api_failed = live.api("/runs", agent_id=agent["id"], outcome="failure", page_size=50)["items"]
    assert failed == [r["id"] for r in api_failed] and failed
    assert all(r["success"] is False for r in api_failed)
    no_page_errors(browser)
    screenshot(browser, "runs")


def test_pages_are_small_labelled_and_fit_a_phone(live: Live, browser: webdriver.Chrome) -> None:
    agent = live.agent("support-bot")
    run = live.api("/runs", agent_id=agent["id"], page_size=1)["items"][0]
    paths = [
        "/",
        f"/agents/{agent['id']}",
        f"/agents/{agent['id']}/runs",
        f"/runs/{run['id']}",
        f"/agents/{agent['id']}/compare",
    ]
    assets = sum(
        len(live.http.get(f"{live.url}/assets/{name}").content)
        for name in ("dashboard.css", "dashboard.js")
    )
    browser.set_window_size(390, 844)  # a phone
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
            assert browser.find_element(By.TAG_NAME, "h1").text
        browser.get(live.url + paths[1])
        screenshot(browser, "overview-phone")
    finally:
        browser.set_window_size(1280, 1000)


def test_an_unknown_agent_is_an_html_404(live: Live, browser: webdriver.Chrome) -> None:
    reply = live.http.get(f"{live.url}/agents/not-an-agent")
    assert reply.status_code == 404 and reply.headers["content-type"].startswith("text/html")
    assert "unknown agent" in reply.text
    browser.get(f"{live.url}/runs/00000000-0000-0000-0000-000000000000")
    assert browser.find_element(By.TAG_NAME, "h1").text == "404"
    browser.get_log("browser")  # the 404 provoked here is this test's, not the next one's


def test_the_keyboard_reaches_every_control_in_order(live: Live, browser: webdriver.Chrome) -> None:
    browser.get(live.url + "/")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    reached = []
    for _ in range(40):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        active = browser.switch_to.active_element
        reached.append(active.get_attribute("id") or active.text)
    for axis in AXES:
        assert f"w-{axis}" in reached
    names = {a["name"] for a in live.api("/agents")["items"]}
    assert names & set(reached)
