"""Forget site… from the panel (GOV-7): the first click shows the count; a confirm inside the
window hides the facts; Undo restores them; a confirm after the window does nothing.

The bridge has no shorter test-only confirm window, so this waits out the real 8 s."""

from __future__ import annotations

import time

import pytest

from tests.e2e.browser import Browser

pytestmark = pytest.mark.e2e
NOTES = ["Lentils need forty minutes at a low simmer", "Smoked paprika goes in at the very end"]


def _fact_count(browser: Browser, url: str) -> int:
    status, body = browser.server.api("POST", "/api/page-match/match", {"url": url}, browser.token())
    assert status == 200, body
    return len(body["facts"])


def test_forget_site_two_clicks_window_and_undo(paired: Browser) -> None:
    url = paired.url("recipes.example", "forget.html")
    page = paired.open(url)
    paired.wait_icon(page, "neutral")
    panel = paired.panel()
    for note in NOTES:
        panel.fill("#note", note)
        panel.click("#send")
        panel.wait_for_selector(f"#facts li:has-text('{note}')")
    assert _fact_count(paired, url) == 2

    # First click: the dry run's count, nothing changed yet.
    panel.click("#forget")
    panel.wait_for_selector("#forget-confirm:not([hidden])")
    assert "Forget 2 memories from recipes.example" in panel.inner_text("#forget-count")
    assert _fact_count(paired, url) == 2
    # Second click inside the window: the facts are hidden.
    panel.click("#forget-yes")
    panel.wait_for_selector("#forget-done:not([hidden])")
    panel.wait_for_selector("#facts-empty:not([hidden])")
    assert panel.locator("#facts li").count() == 0 and _fact_count(paired, url) == 0
    # Undo restores them.
    panel.click("#forget-undo")
    panel.wait_for_selector("#message:has-text('Restored 2 memories')")
    panel.wait_for_selector(f"#facts li:has-text('{NOTES[0]}')")
    assert _fact_count(paired, url) == 2

    # A confirm after the window: the panel withdraws the button, and the app refuses the token.
    panel.click("#forget")
    panel.wait_for_selector("#forget-confirm:not([hidden])")
    opened = time.monotonic()
    token = panel.evaluate("() => chrome.runtime.sendMessage({action: 'forgetDryRun', host: 'recipes.example'})")
    token = token["data"]["token"]
    panel.wait_for_selector("#forget-confirm", state="hidden", timeout=10_000)
    assert time.monotonic() - opened >= 7
    assert "not confirmed in time" in panel.inner_text("#message")
    time.sleep(max(0.0, 8.5 - (time.monotonic() - opened)))
    late = panel.evaluate("(token) => chrome.runtime.sendMessage({action: 'forgetConfirm', token})", token)
    assert late["ok"] is False and late["error"]["status"] == 409, late
    assert _fact_count(paired, url) == 2
    assert panel.locator("#facts li").count() == 2
