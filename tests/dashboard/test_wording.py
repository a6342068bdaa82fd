"""Words on the dashboard that misled (issue 42 item 9), in a real browser
against the demo's collector: each says what its figure counts."""

from __future__ import annotations

from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.dashboard.conftest import Live
from tests.dashboard.test_pages import no_page_errors


def test_the_overview_counts_unsuccessful_runs_and_names_infrastructure_failures(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    agent = live.agent("support-bot")
    stats = live.api(f"/agents/{agent['id']}/stats")
    unsuccessful = stats["completed_runs"] - stats["successful_runs"]
    assert unsuccessful > 0 and stats["failed_runs"] == 0  # the demo's: wrong answers only
    browser.get(f"{live.url}/agents/{agent['id']}")
    counts = browser.find_element(By.ID, "counts").text
    assert (
        f"{stats['completed_runs']} completed ({stats['successful_runs']} successful, "
        f"{unsuccessful} unsuccessful), 0 infrastructure failures (status failed: the harness "
        "could not run them)"
    ) in counts
    no_page_errors(browser)


def test_pass_5_says_it_needs_five_runs_a_task_where_tasks_have_fewer(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    coder = live.agent("coder")  # four tasks, three runs each
    reliability = live.api(f"/agents/{coder['id']}/reliability")
    assert reliability["pass_5"] == 0.0 and {t["n"] for t in reliability["tasks"]} == {3}
    browser.get(f"{live.url}/agents/{coder['id']}")
    note = browser.find_element(By.ID, "pass-k-note").text
    assert (
        note
        == "pass^5 needs 5 runs a task: 4 of the 4 tasks counted have fewer, and count 0 there."
    )
    bot = live.agent("support-bot")  # six runs a task over its two versions
    assert min(t["n"] for t in live.api(f"/agents/{bot['id']}/reliability")["tasks"]) >= 5
    browser.get(f"{live.url}/agents/{bot['id']}")
    assert browser.find_elements(By.ID, "pass-k-note") == []


def test_tool_steps_read_ok_error_or_no_error_never_a_raw_status(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    agent = live.agent("coder")
    runs = live.api("/runs", agent_id=agent["id"], page_size=50)["items"]
    chosen = max(runs, key=lambda r: r["steps"] or 0)
    calls = live.api(f"/runs/{chosen['id']}")["tool_calls"]
    assert calls and {c["status"] for c in calls} == {"unset"}  # the SDK's default
    browser.get(f"{live.url}/runs/{chosen['id']}")
    shown = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#tool-steps .step-status")]
    assert shown == ["no error"] * len(calls)
    title = browser.find_element(By.CSS_SELECTOR, "#tool-steps .step-status").get_attribute("title")
    assert "OpenTelemetry UNSET" in (title or "")


def test_the_api_reference_shows_code_not_backticks(live: Live, browser: webdriver.Chrome) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    document = live.http.get(f"{live.url}/openapi.json").json()
    assert "`" in document["paths"]["/api/v1/agents/{agent_id}/compare"]["get"]["description"]
    browser.get(f"{live.url}/docs")
    assert "`" not in browser.find_element(By.TAG_NAME, "main").text
    compare = browser.find_element(By.ID, "op-compare_api_v1_agents__agent_id__compare_get")
    assert "regressed" in [c.text for c in compare.find_elements(By.TAG_NAME, "code")]
    no_page_errors(browser)
