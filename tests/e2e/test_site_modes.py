"""The app decides the mode; the extension asks first (GOV-4, EXT-1).

``*.example`` hosts are not on the sensitive lists, so the test first makes ``bank.example``
``off`` through the app's API (as a user rule) — the same state a bank gets by default.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser import MENU_LIBRARY, MENU_SELECTION, Browser

pytestmark = pytest.mark.e2e

# Routes that carry a page (URL, title, text) or act on one: none may be called on an off host.
PAGE_ROUTES = {
    "/api/page-match/match", "/api/page-match/probe", "/api/page-match/suggest", "/api/notes", "/api/links",
    "/api/selection", "/api/library", "/api/page-link", "/api/active-page", "/api/turns",
}
# Routes without page data the panel may call on any page: liveness and the approvals list.
NEUTRAL_ROUTES = {"/api/ping", "/api/approvals"}


def test_off_host_gets_only_the_site_mode_query_then_collect_works(paired: Browser) -> None:
    server, token = paired.server, paired.token()
    status, resolution = server.api("PUT", "/api/page-match/site-mode", {"host": "bank.example", "mode": "off"}, token)
    assert status == 200 and resolution["mode"] == "off"
    before = len(server.requests())

    bank = paired.open(paired.url("bank.example", "bank.html"))
    paired.wait_icon(bank, "dimmed")
    paired.click_toolbar(bank)  # even a click on the toolbar button reads nothing here
    bank.evaluate("() => getSelection().selectAllChildren(document.body)")
    refused = paired.menu_click(bank, MENU_SELECTION, bank.evaluate("() => getSelection().toString()"))
    assert not refused["ok"] and "off on bank.example" in refused["text"]
    assert not paired.menu_click(bank, MENU_LIBRARY)["ok"]
    panel = paired.panel()
    panel.wait_for_selector("#off:not([hidden])")
    assert "bank.example" in panel.inner_text("#off-why") and panel.is_hidden("#page")
    bank.bring_to_front()
    paired.wait_icon(bank, "dimmed")

    sent = server.requests()[before:]
    paths = {path for _, path, _ in sent}
    assert ("GET", "/api/page-match/site-mode", 200) in sent
    assert not paths & PAGE_ROUTES, sent
    assert paths <= {"/api/page-match/site-mode"} | NEUTRAL_ROUTES, sent
    assert paired.diagnostics()["probes"] == {}

    # The person asks the app to collect here: the mode changes, then match and notes work.
    panel = paired.panel()
    panel.click("#mode-collect")
    panel.wait_for_selector("#page:not([hidden])")
    assert panel.inner_text("#mode-badge") == "Collect"
    panel.fill("#note", "Statements older than seven years are shredded")
    panel.click("#send")
    panel.wait_for_selector("#facts li:has-text('Statements older than seven years')")
    later = {path for _, path, _ in server.requests()[before:]}
    assert {"/api/page-match/match", "/api/notes", "/api/active-page"} <= later
    paired.wait_icon(bank, "green")
