"""Headless Chromium: the system's browser, driven by Selenium through the system's
chromedriver, both named by path -- Selenium Manager is never asked for either, so nothing is
downloaded. The site's real-browser tests (tests/test_site_browser.py) and its screenshots
(docs/site_screenshots.py) start it here.

``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (Debian's ``chromium`` and
``chromium-driver``) unless ``CASCADE_CHROMIUM`` and ``CASCADE_CHROMEDRIVER`` name others."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:  # the test extra's: without it the browser tests skip, saying so
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager
except ImportError:  # pragma: no cover (a machine without the test extra)
    webdriver = None

CHROMIUM = os.environ.get("CASCADE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CASCADE_CHROMEDRIVER", "/usr/bin/chromedriver")
# Headless, and quiet: without the background-networking flags Chromium reaches out at start
# (updates, sync, field trials), which a closed network refuses. No proxy: the pages are files
# and 127.0.0.1, and nothing else may be fetched.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--no-proxy-server")


def missing(chromium: str = CHROMIUM, driver: str = CHROMEDRIVER) -> str:
    """Why Chromium cannot be driven here ("" when it can)."""
    gone = [f"{name} ({path})" for name, path in (("chromium", chromium),
                                                  ("chromedriver", driver))
            if not os.access(path, os.X_OK)]
    if webdriver is None:
        gone.append("selenium (the test extra)")
    return "no " + ", no ".join(gone) if gone else ""


def _refuse(*args: object) -> dict:
    raise AssertionError("Selenium Manager was asked for a driver: it may download one")


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """While the driver starts: Selenium Manager refused (and offline, were it asked), and
    chromedriver reached directly on this machine, whatever proxy the environment names
    (Selenium would send its commands through it)."""
    saved = {k: os.environ.get(k) for k in ("SE_OFFLINE", "no_proxy", "NO_PROXY")}
    local = ",".join(x for x in ("localhost,127.0.0.1", saved["no_proxy"] or saved["NO_PROXY"])
                     if x)
    os.environ.update({"SE_OFFLINE": "true", "no_proxy": local, "NO_PROXY": local})
    asked, SeleniumManager.binary_paths = SeleniumManager.binary_paths, _refuse
    try:
        yield
    finally:
        SeleniumManager.binary_paths = asked
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def chromium(profile: Path, size: tuple[int, int] = (1280, 900), logs: bool = False) -> Any:
    """A headless Chromium with the new, empty profile ``profile``, its window ``size``;
    ``logs``: the console's every message and every request kept (``goog:loggingPrefs``:
    browser, performance; read with ``get_log``)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--window-size={size[0]},{size[1]}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    options.set_capability("unhandledPromptBehavior", "ignore")
    with _starting():
        return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
