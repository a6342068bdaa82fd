"""The run page shows a viewer what the API shows them (docs/api.md "Who may
read what"): without the owner's key, neither the grade's texts nor an
error class beyond the fixed ones; once the owner's key, typed into the page
to load the trace, is accepted, the rest."""

from __future__ import annotations

import time
from typing import Any

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from bench.support.otlp import new_span_id, new_trace_id, request, span
from bench.support.servers import cli
from tests.dashboard.conftest import Live, screenshot
from tests.dashboard.test_pages import no_page_errors

AGENT = "private-bot"  # no task and no agent span: off the board the other tests read
FREE_TEXT_CLASS = "LookupError: no account for jane@example.com"
EXPLANATION = "sent the refund to jane@example.com"
EXPECTED = "the answer key: 42"


def graded_private_run(live: Live) -> dict[str, Any]:
    """A failed run whose root carries free text, graded with an answer key;
    its public detail once the grade applies."""
    trace_id = new_trace_id()
    evaluation = {
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": EXPLANATION,
    }
    root = span(
        trace_id,
        new_span_id(),
        "run",
        attributes={"error.type": FREE_TEXT_CLASS},
        status=2,
        events=[("gen_ai.evaluation.result", evaluation)],
    )
    reply = live.http.post(
        f"{live.url}/v1/traces",
        content=request([root], AGENT).SerializeToString(),
        headers={"content-type": "application/x-protobuf", "authorization": f"Bearer {live.key}"},
    )
    assert reply.status_code == 200, reply.text
    grader = cli(
        "keys", "create", "--owner", "demo", "--role", "grader", "--database-url", live.database_url
    ).stdout.strip()
    grade = {
        "agent": AGENT,
        "run_key": trace_id.hex(),
        "success": False,
        "expected_output": EXPECTED,
        "error_class": "wrong_answer",
    }
    posted = live.http.post(
        f"{live.url}/api/v1/grades", json=grade, headers={"authorization": f"Bearer {grader}"}
    )
    assert posted.status_code == 202, posted.text
    deadline = time.monotonic() + 30
    while True:
        agents = live.api("/agents", all="true")["items"]
        ident = next((a["id"] for a in agents if a["name"] == AGENT), None)
        runs = live.api("/runs", agent_id=ident)["items"] if ident else []
        if runs and runs[0]["success_source"] == "graded":
            detail: dict[str, Any] = live.api(f"/runs/{runs[0]['id']}")
            return detail
        assert time.monotonic() < deadline, "the private run was not graded in time"
        time.sleep(0.2)


def test_the_run_page_shows_the_owners_text_only_with_the_owners_key(
    live: Live, browser: webdriver.Chrome
) -> None:
    run = graded_private_run(live)
    browser.get_log("browser")  # what earlier tests left in the log is theirs
    assert (run["error_class"], run["grade"]["expected_output"]) == ("other", None)
    browser.get(f"{live.url}/runs/{run['id']}")
    assert browser.find_element(By.ID, "error-class").text == "other"
    assert browser.find_element(By.ID, "grade-error-class").text == "other"
    assert browser.find_element(By.ID, "grade-withheld").is_displayed()
    for secret in ("jane@example.com", EXPECTED, "wrong_answer"):
        assert secret not in browser.page_source
    screenshot(browser, "run-public")
    browser.find_element(By.ID, "trace-key").send_keys(live.key + Keys.ENTER)
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.ID, "error-class").text == FREE_TEXT_CLASS
    )
    texts = browser.find_element(By.ID, "grade-texts").text
    assert EXPECTED in texts and EXPLANATION in texts
    assert browser.find_element(By.ID, "grade-error-class").text == "wrong_answer"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace li.span")) == 1
    no_page_errors(browser)
    screenshot(browser, "run-owner")
