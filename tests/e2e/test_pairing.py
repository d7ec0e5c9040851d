"""Pairing end to end (EXT-1, BRIDGE-2): app not found → port → code from the app → token; a
wrong code is refused; a revoked token makes the panel ask to pair again."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.e2e.browser import Browser
from tests.e2e.conftest import EXTENSION_DIR, PageSite, VodouServer
from tests.support import closed_port

pytestmark = pytest.mark.e2e


def test_panel_says_plainly_when_the_app_is_not_found(browser: Browser) -> None:
    """The extension pointed at a port this test owns and keeps closed (not the default port, where
    a developer's own app may answer)."""
    with closed_port() as port:
        panel = browser.panel()
        panel.click("#port-box summary")
        panel.fill("#port", str(port))
        panel.click("#port-form button")
        panel.wait_for_selector("#problem:not([hidden]) #problem-text:has-text('not running')")
        assert "Start the Vodou app" in panel.inner_text("#problem-todo")
        assert browser.token() == ""


def test_pairing_end_to_end_then_revocation_asks_to_pair_again(browser: Browser) -> None:
    server = browser.server
    panel = browser.panel()
    panel.click("#port-box summary")
    panel.fill("#port", str(server.port))
    panel.click("#port-form button")
    panel.wait_for_selector("#pairing:not([hidden])")

    printed = server.codes_printed()
    panel.click("#pair-start")
    code = server.pairing_code(after=printed)
    wrong = "AAAAAAAA" if code != "AAAAAAAA" else "BBBBBBBB"
    panel.fill("#pair-code", wrong)
    panel.click("#pair-complete")
    panel.wait_for_selector("#message.bad")
    assert browser.token() == ""

    panel.fill("#pair-code", code.lower())  # codes are case-insensitive
    panel.click("#pair-complete")
    panel.wait_for_selector("#message:has-text('Paired with the Vodou app')")
    token = browser.token()
    assert re.fullmatch(r"[0-9a-f]{64}", token)
    assert panel.is_hidden("#pairing") and panel.is_visible("#unpair")
    assert server.api("GET", "/api/ping", token=token)[1]["paired"] is True

    # The app revokes the pairing: the next request is 401 and the panel asks to pair again.
    assert server.api("DELETE", "/api/pair", {}, token=token)[0] == 200
    panel = browser.panel()
    panel.wait_for_selector("#pairing:not([hidden])")
    assert browser.token() == ""
    assert token not in server.output()  # the token never reaches the server's logs


def test_another_api_version_is_said_plainly(tmp_path: Path, vodou_server: VodouServer, page_server: PageSite) -> None:
    """An extension built for API 2.0 against this app (1.0): the app answers 412 and the panel
    says the versions differ and what to do. (A copy of the extension with its version raised.)"""
    from playwright.sync_api import sync_playwright

    copy = tmp_path / "extension"
    shutil.copytree(EXTENSION_DIR, copy)
    config = copy / "js" / "config.js"
    config.write_text(config.read_text().replace("API_VERSION = '1.0'", "API_VERSION = '2.0'"))
    with sync_playwright() as playwright:
        browser = Browser.launch(playwright, tmp_path / "profile", copy, vodou_server, page_server.port)
        try:
            # Not through the port form: a developer's own app on the default port answers this
            # extension with 412 too, and then the panel hides the form.
            browser.point_at(vodou_server.port)
            panel = browser.panel()
            panel.wait_for_selector("#problem:not([hidden]) #problem-text:has-text('speaks API')")
            assert "speaks API 1.0; this extension needs 2.0" in panel.inner_text("#problem-text")
            assert "Update both to the same release" in panel.inner_text("#problem-todo")
        finally:
            browser.close()
    assert ("GET", "/api/ping", 412) in vodou_server.requests()
