"""Use + a note (PAGE-1): the page text rides one turn as pageContext, with a visible indicator,
and is stored nowhere — a canary from the page body is absent from every vault file after."""

from __future__ import annotations

import pytest

from tests.e2e.browser import Browser
from tests.e2e.conftest import PageSite
from tests.support import bytes_hits, total_hits

pytestmark = pytest.mark.e2e


def test_use_and_note_leave_no_canary_in_the_vault(paired: Browser, page_server: PageSite) -> None:
    server = paired.server
    page = paired.open(paired.url("harbour.example", "canary.html"))
    paired.wait_icon(page, "neutral")
    paired.click_toolbar(page)  # the person's click lets the extension read this page
    panel = paired.panel()
    panel.wait_for_selector("#page:not([hidden])")

    panel.click("#use")
    panel.wait_for_selector("#attached:not([hidden])")
    assert panel.inner_text("#send") == "Send with page"
    note = "Ferry timetable changes in May, check the harbour office"
    panel.fill("#note", note)
    panel.click("#send")
    panel.wait_for_selector("#message:has-text('Sent with the page')")
    assert panel.is_hidden("#attached")  # one turn only
    assert panel.inner_text("#send") == "Save"

    # With page content in the turn, saving the note is parked for approval (PAGE-2).
    panel.wait_for_selector("#approvals li")
    assert note in panel.inner_text("#approvals")
    panel.click("#approvals li button[data-decision='approve']")
    panel.wait_for_selector("#message:has-text('Approved')")

    # A second note without Use carries no page text.
    panel.fill("#note", "Second note, typed only")
    panel.click("#send")
    panel.wait_for_selector("#message:has-text('Saved the note')")

    assert total_hits(server.vault, note) > 0, "the approved note itself was not stored"
    assert total_hits(server.vault, "Second note, typed only") > 0
    assert bytes_hits(server.vault, page_server.canary) == {name: 0 for name in bytes_hits(server.vault, "x")}
    assert total_hits(server.vault, page_server.canary) == 0
    assert total_hits(server.vault, "hunter2") == 0
    assert page_server.canary not in server.output()
