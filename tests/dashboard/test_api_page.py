"""/docs, the "API" link of every dashboard page: the OpenAPI document rendered
by the collector itself (no script, style or font from another site, the
dashboard's strict CSP), listing every operation with its parameters and
responses and every schema with its fields."""

from __future__ import annotations

import re

from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.dashboard.conftest import Live, screenshot
from tests.dashboard.test_pages import no_page_errors

FOREIGN = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def test_the_api_page_renders_the_openapi_document_from_the_collector_alone(
    live: Live, browser: webdriver.Chrome
) -> None:
    document = live.http.get(f"{live.url}/openapi.json").json()
    browser.get_log("browser")  # what earlier tests left in the log is theirs
    reply = live.http.get(f"{live.url}/docs")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in reply.headers["content-security-policy"]
    assert not FOREIGN.search(reply.text)
    assert len(reply.content) < 300 * 1024
    assert live.http.get(f"{live.url}/redoc").status_code == 404
    browser.get(f"{live.url}/")
    browser.find_element(By.LINK_TEXT, "API").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "API"
    assert browser.current_url == f"{live.url}/docs"
    operations = 0
    for path, item in document["paths"].items():
        for method, spec in item.items():
            section = browser.find_element(By.ID, f"op-{spec['operationId']}")
            text = section.text
            assert f"{method.upper()} {path}" in text
            for parameter in spec.get("parameters", []):
                assert parameter["name"] in text, (path, parameter["name"])
            for status in spec["responses"]:
                assert status in text
            operations += 1
    assert operations >= 19
    for name, schema in document["components"]["schemas"].items():
        shown = browser.find_element(By.ID, f"schema-{name}").text
        for field in schema.get("properties", {}):
            assert field in shown, (name, field)
    # a response links to its schema; the run detail says which fields need the key
    run_detail = browser.find_element(By.ID, "schema-RunDetail").text
    assert "owner_view" in run_detail and "the owner's key" in run_detail
    get_run = document["paths"]["/api/v1/runs/{run_id}"]["get"]["operationId"]
    browser.find_element(By.CSS_SELECTOR, f"#op-{get_run} a[href='#schema-RunDetail']")
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert loaded and all(url.startswith(f"{live.url}/") for url in loaded)
    no_page_errors(browser)
    screenshot(browser, "api")


def test_the_api_page_is_labelled_and_fits_a_phone(live: Live, browser: webdriver.Chrome) -> None:
    browser.set_window_size(390, 844)
    try:
        browser.get(f"{live.url}/docs")
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0, f"/docs is {overflow}px wider than a phone"
        headings = browser.execute_script(
            "return Array.from(document.querySelectorAll('table'))"
            ".filter(t => !t.querySelector('caption')).length"
        )
        assert headings == 0  # every table says what it lists
    finally:
        browser.set_window_size(1280, 1000)
