"""The compare page in a real browser: the per-axis table fits its card at
common desktop widths, and a smallest change (min_effect) is a field whose
verdicts are the API's."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.dashboard.conftest import Live
from tests.dashboard.test_pages import no_page_errors

DESKTOPS = (1400, 1920)  # window widths the per-axis table must fit at


def table_overflow(driver: webdriver.Chrome, table_id: str) -> dict[str, float]:
    """How far the table reaches past its card's content box (0 or less: it fits),
    and how much of it its scroll box hides."""
    return dict(
        driver.execute_script(
            """
            const table = document.getElementById(arguments[0]);
            const card = table.closest('.card');
            const box = card.getBoundingClientRect();
            const padding = parseFloat(getComputedStyle(card).paddingRight);
            const scroller = table.parentElement;
            return {
              past_card: table.getBoundingClientRect().right - (box.right - padding),
              hidden: scroller.scrollWidth - scroller.clientWidth,
            };
            """,
            table_id,
        )
    )


def assert_fits_at_desktop_widths(driver: webdriver.Chrome, url: str) -> None:
    size = driver.get_window_size()
    try:
        for width in DESKTOPS:
            driver.set_window_size(width, 1000)
            driver.get(url)
            overflow = table_overflow(driver, "verdicts")
            assert overflow["past_card"] <= 0.5, (width, overflow)
            assert overflow["hidden"] <= 0, (width, overflow)
            cells = driver.find_elements(By.CSS_SELECTOR, "#verdicts td.adjusted")
            assert all(cell.is_displayed() for cell in cells)
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_the_per_axis_table_fits_its_card_at_1400_and_1920_pixels(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    agent = live.agent("support-bot")
    assert_fits_at_desktop_widths(browser, f"{live.url}/agents/{agent['id']}/compare")
    no_page_errors(browser)


def test_a_smallest_change_typed_on_the_page_gives_the_apis_verdicts(
    live: Live, browser: webdriver.Chrome
) -> None:
    browser.get_log("browser")  # what earlier tests left: not this one's
    agent = live.agent("support-bot")
    plain = live.api(f"/agents/{agent['id']}/compare")
    assert plain["axes"]["latency"]["verdict"] == "regressed"
    least = abs(plain["axes"]["latency"]["delta"]) + 0.01  # just past the latency change
    browser.get(f"{live.url}/agents/{agent['id']}/compare")
    field = browser.find_element(By.ID, "min_effect")
    assert field.get_attribute("value") == ""
    note = browser.find_element(By.ID, "min-effect-note").text
    assert "a CI gate might use 1" in note
    field.send_keys(f"{least:.2f}")
    browser.find_element(By.CSS_SELECTOR, ".picker button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda d: "min_effect=" in d.current_url)
    query = parse_qs(urlsplit(browser.current_url).query)
    assert query == {"base": ["1.4.0"], "head": ["1.5.0"], "min_effect": [f"{least:.2f}"]}
    gated = live.api(
        f"/agents/{agent['id']}/compare", base="1.4.0", head="1.5.0", min_effect=f"{least:.2f}"
    )
    assert gated["axes"]["latency"]["verdict"] == "unchanged"
    for axis, change in gated["axes"].items():
        row = browser.find_element(By.CSS_SELECTOR, f"#verdicts tr[data-axis='{axis}']")
        assert change["verdict"].replace("_", " ") in row.text
    assert browser.find_element(By.ID, "min_effect").get_attribute("value") == f"{least:.2f}"
    assert "and the axis to move by at least" in browser.find_element(By.ID, "axes-note").text
    browser.get(f"{live.url}/agents/{agent['id']}/compare?min_effect=-1")
    assert "min_effect must be a finite number >= 0" in browser.find_element(By.ID, "problem").text
    no_page_errors(browser)
