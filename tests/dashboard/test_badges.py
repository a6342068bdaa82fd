"""The badge in a real Chromium: as an <img> on a page of its own (a README's
rendering) and on the agent page, with its embed lines and certificate link."""

from __future__ import annotations

import time
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from bench.support.otlp import agent_run
from tests.dashboard.conftest import Live, screenshot
from tests.integration.harness import running_collector

HOSTILE = '<script>alert(1)</script> & "quotes" \u202eright-to-left ' + "x" * 200


def natural_width(driver: webdriver.Chrome, element_id: str) -> int:
    deadline = time.monotonic() + 30
    script = (
        f"const i = document.getElementById('{element_id}'); return i.complete && i.naturalWidth"
    )
    while True:
        width = driver.execute_script(script)
        if width:
            return int(width)
        assert time.monotonic() < deadline, "the badge did not load"
        time.sleep(0.1)


def test_a_badge_renders_as_an_img_on_a_page_even_for_a_hostile_name(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """On a collector of its own: the shared demo collector keeps its agents."""
    with running_collector(tmp_path) as c:
        for name in ("ordinary", HOSTILE):
            assert c.post(agent_run("t1", service=name).SerializeToString()).status_code == 200
        c.settle()
        ids = dict(c.query("SELECT name, id FROM agents"))
        page = tmp_path / "readme.html"
        page.write_text(
            "<!doctype html><title>README</title>"
            f'<img id="ordinary" src="{c.http_url}/badge/{ids["ordinary"]}.svg" alt="ordinary">'
            f'<img id="hostile" src="{c.http_url}/badge/{ids[HOSTILE]}.svg" alt="hostile">'
        )
        browser.get(page.as_uri())
        assert natural_width(browser, "ordinary") > 40
        assert natural_width(browser, "hostile") > 40
        try:
            opened = browser.switch_to.alert.text
        except NoAlertPresentException:
            opened = None
        assert opened is None, "a badge ran a script"
        screenshot(browser, "badges-readme")


def test_the_agent_page_shows_its_badge_the_embed_lines_and_the_certificate_link(
    live: Live, browser: webdriver.Chrome
) -> None:
    agent = live.agent("support-bot")
    browser.get(f"{live.url}/agents/{agent['id']}")
    assert natural_width(browser, "badge-img") > 40
    markdown = browser.find_element(By.ID, "embed-markdown").text
    assert markdown == (
        f"[![support-bot]({live.url}/badge/{agent['id']}.svg)]({live.url}/agents/{agent['id']})"
    )
    html = browser.find_element(By.ID, "embed-html").text
    assert f'<img src="{live.url}/badge/{agent["id"]}.svg" alt="support-bot">' in html
    link = browser.find_element(By.ID, "score-certificate").get_attribute("href")
    assert link == f"{live.url}/api/v1/agents/{agent['id']}/certificate"
    reply = live.http.get(link)
    assert reply.status_code == 200 and reply.json()["payloadType"] == (
        "application/vnd.in-toto+json"
    )
    screenshot(browser, "agent-badge")
