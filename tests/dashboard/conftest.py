"""A live collector fed by the demo (the real OTel SDK exporter) and a real
headless Chromium (Debian's, installed by scripts/ensure-chromium)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from bench.support.servers import ServerProcess, cli, start_server
from tests.schemas import sqlite_copy_at_head

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Screenshots of every page, from every run (make test: build/screenshots).
SCREENSHOTS = Path(
    os.environ.get("BADGE_SCREENSHOTS", Path(__file__).parents[2] / "build" / "screenshots")
)
DEMO_RUNS = 84  # `demo --rounds 3`: support-bot's 10 tasks in two versions, two other agents


@dataclass
class Live:
    server: ServerProcess
    key: str
    http: httpx.Client
    database_url: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"

    def api(self, path: str, **params: Any) -> Any:
        reply = self.http.get(f"{self.url}/api/v1{path}", params=params)
        assert reply.status_code == 200, reply.text
        return reply.json()

    def agent(self, name: str) -> dict[str, Any]:
        items: list[dict[str, Any]] = self.api("/agents")["items"]
        return next(a for a in items if a["name"] == name)


@pytest.fixture(scope="package")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    db = tmp_path_factory.mktemp("dashboard") / "collector.db"
    url = sqlite_copy_at_head(db)  # keys create makes no database
    key = cli("keys", "create", "--owner", "demo", "--database-url", url).stdout.strip()
    server = start_server(db)
    http = httpx.Client(timeout=30)
    try:
        endpoint = f"http://127.0.0.1:{server.http_port}"
        demo = cli("demo", "--rounds", "3", "--key", key, "--endpoint", endpoint)
        assert f"sent {DEMO_RUNS} runs" in demo.stdout
        live = Live(server, key, http, url)
        deadline = time.monotonic() + 60
        while sum(a["total_runs"] for a in live.api("/agents")["items"]) < DEMO_RUNS:
            assert time.monotonic() < deadline, "the demo's runs did not arrive"
            time.sleep(0.2)
        yield live
    finally:
        http.close()
        server.stop()


@pytest.fixture(scope="package")
def browser() -> Iterator[webdriver.Chrome]:
    for binary in (CHROMIUM, CHROMEDRIVER):
        assert shutil.which(binary), f"{binary} is missing: run `make chromium`"
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never downloads
    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    """The whole page, saved under SCREENSHOTS."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = driver.get_window_size()["width"]
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(width, min(max(height + 120, 700), 4000))
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(width, 1000)
    return path
