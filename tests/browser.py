"""A real browser for the tests: Chromium driven by Playwright, and axe-core's accessibility check.

Chromium is Debian's (`make test` installs it when it can; `CHROMIUM` names another build). Without
one the browser tests fail with the line saying how to get it — they are never skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Frame, Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# `make screenshots` sets this to docs/images, so the docs show what the tests saw; otherwise they
# go to a temporary folder and the work tree stays clean.
SCREENSHOTS = Path(os.environ.get("MNEMOSYNE_SCREENSHOTS") or "/tmp/mnemosyne-screenshots")
MISSING = (
    "the browser tests need Chromium: run `make test` as root (it installs Debian's chromium), "
    "or `sudo apt-get install chromium`, or set CHROMIUM to a Chromium binary"
)


def chromium_path() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(MISSING, pytrace=False)
    return found


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    # Playwright's sync API runs an event loop in this thread; Django's ORM would then refuse to
    # run here, so the tests that drive a browser do their database work through `in_thread`.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield browser
        finally:
            browser.close()


T = TypeVar("T")


def in_thread(work: Callable[[], T]) -> T:
    """Run database work off the thread Playwright's event loop lives in (see `chromium`)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed back to the caller
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def axe_violations(page: Page | Frame) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A/AA violations on the page (or one frame of it) as it is now (run
    through the DevTools protocol, which a page's Content-Security-Policy does not govern)."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']})"
    )
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["html"][:120] for n in v["nodes"]]}
        for v in result["violations"]
    ]


def screenshot(page: Page, name: str, *, full_page: bool = True) -> Path:
    """A screenshot for the docs (NAME.png under SCREENSHOTS), taken as the test sees the page
    (the whole page, or what the window shows)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def sign_in(page: Page, username: str, password: str) -> None:
    """Sign in on the console's sign-in page the page was sent to, and wait for where it leads."""
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
