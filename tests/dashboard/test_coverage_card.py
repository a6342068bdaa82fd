"""The agent page's Coverage card (CONVENTIONS.md section 6): anyone sees the
share and the warning naming the scope; the owner's key, typed into the
card, shows which scopes and span names no convention recognised, and a run
with each; another owner's key is refused as for a trace."""

from __future__ import annotations

import time

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from bench.support.servers import cli
from tests.dashboard.conftest import Live, screenshot
from tests.dashboard.test_pages import no_page_errors
from tests.integration.test_coverage import acme_run

AGENT = "acme-agent"  # no task and no agent span: off the board the other tests read
WARNING = "50% of this agent's spans, from scope `acme.tracer`, were not recognised."


def acme_agent(live: Live) -> str:
    """Two runs of the made-up family; the agent's id once both are stored."""
    for _ in range(2):
        reply = live.http.post(
            f"{live.url}/v1/traces",
            content=acme_run(None),
            headers={
                "content-type": "application/x-protobuf",
                "authorization": f"Bearer {live.key}",
            },
        )
        assert reply.status_code == 200, reply.text
    deadline = time.monotonic() + 20
    while True:
        agents = live.api("/agents", all="true")["items"]
        ident = next((a["id"] for a in agents if a["name"] == AGENT), None)
        if ident and len(live.api("/runs", agent_id=ident)["items"]) == 2:
            return str(ident)
        assert time.monotonic() < deadline, "the runs did not arrive"
        time.sleep(0.2)


def load_with(browser: webdriver.Chrome, key: str) -> None:
    field = browser.find_element(By.ID, "coverage-key")
    field.clear()
    field.send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "#coverage-form button").click()


def test_the_agent_page_warns_of_unrecognised_spans_and_shows_them_with_the_key(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent_id = acme_agent(live)
    browser.get_log("browser")  # what earlier tests left in the log is theirs
    browser.get(f"{live.url}/agents/{agent_id}")
    assert browser.find_element(By.ID, "coverage-warning").text == WARNING
    assert browser.find_element(By.ID, "coverage-share").text.startswith("6 of 12 spans (50.0%)")
    assert not browser.find_elements(By.ID, "coverage-scopes")  # the owner's

    stranger = cli("keys", "create", "--owner", "someone-else", "--database-url", live.database_url)
    load_with(browser, stranger.stdout.strip())
    WebDriverWait(browser, 10).until(
        lambda d: "another owner" in d.find_element(By.ID, "coverage-status").text
    )
    assert not browser.find_elements(By.ID, "coverage-scopes")

    load_with(browser, live.key)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "coverage-scopes"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#coverage-scopes tbody tr")
    assert rows[0].get_attribute("data-scope") == "acme.tracer"
    assert "100%" in rows[0].text
    names = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#coverage-names li")]
    assert names[0].startswith("Tool: search from acme.tracer: 4 spans")
    assert names[1].startswith("Generation from acme.tracer: 2 spans")
    screenshot(browser, "agent-coverage")
    no_page_errors_but_the_refusal(browser)
    browser.find_element(By.CSS_SELECTOR, "#coverage-names li a").click()
    WebDriverWait(browser, 10).until(lambda d: "/runs/" in d.current_url)
    assert browser.find_element(By.ID, "unrecognised").text == "3 unrecognised"


def test_an_agent_whose_spans_are_all_recognised_shows_no_warning(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("support-bot")
    browser.get_log("browser")
    browser.get(f"{live.url}/agents/{agent['id']}")
    assert not browser.find_elements(By.ID, "coverage-warning")
    assert "were not recognised by any convention" in (
        browser.find_element(By.ID, "coverage-share").text
    )
    no_page_errors(browser)


def no_page_errors_but_the_refusal(driver: webdriver.Chrome) -> None:
    """The 403 of the stranger's key is the browser's to log; nothing else."""
    problems = [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE"
        and "favicon.ico" not in e["message"]
        and "403" not in e["message"]
    ]
    assert problems == []
