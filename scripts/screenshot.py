"""A dashboard page as the docs show it: a real headless Chromium (Debian's,
`make chromium`), the whole page, 1,280 px wide, as the browser tests take
theirs (tests/dashboard/conftest.py `screenshot`).

    .venv/bin/python scripts/screenshot.py URL OUT.png [--width 1280]

The README's image is the overview of the demo agent after one `make demo`
on a fresh `make run` (its last lines print the agent's address):

    .venv/bin/python scripts/screenshot.py \
        http://127.0.0.1:4318/agents/ID docs/dashboard-overview.png
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(binary):
            print(f"error: {binary} is missing: run `make chromium`", file=sys.stderr)
            return 2
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never downloads
    options = Options()
    options.binary_location = CHROMIUM
    flags = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage")
    for flag in (*flags, "--no-first-run", "--hide-scrollbars", f"--window-size={args.width},1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(args.url)
        height = int(driver.execute_script("return document.documentElement.scrollHeight"))
        driver.set_window_size(args.width, min(max(height + 120, 700), 4000))
        driver.save_screenshot(args.out)
    finally:
        driver.quit()
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
