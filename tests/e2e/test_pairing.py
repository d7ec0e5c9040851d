"""Pairing end to end (EXT-1, BRIDGE-2): app not found → port → code from the app → token; a
wrong code is refused; a revoked token makes the panel ask to pair again."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import Browser

pytestmark = pytest.mark.e2e


def test_panel_says_plainly_when_the_app_is_not_found(browser: Browser) -> None:
    panel = browser.panel()
    panel.wait_for_selector("#problem:not([hidden])")
    assert "not running" in panel.inner_text("#problem-text")
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
