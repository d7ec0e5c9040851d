"""The memory browser's details show a memory's neighbour turns in its conversation."""

from __future__ import annotations

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.browser.details import details_html, load_details
from vodou_desktop.vault import Vault


def test_details_show_the_turns_before_and_after(vault: Vault) -> None:
    ids = [remember(vault, text, Origin(kind="turn", tool="t"), project="talk", valid_at="2023-05-07")
           for text in ("A: Where is the spare key?", "B: Under the blue flowerpot.", "A: Thanks!")]
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET invalid_at = 'now' WHERE id = ?", (ids[2],)))
    details = load_details(vault, ids[1])
    assert [(label, f.id) for label, f in details.conversation] == [("before", ids[0]), ("after", ids[2])]
    body = details_html(details)
    assert "In its conversation" in body and "A: Where is the spare key?" in body
    assert "A: Thanks! (forgotten)" in body
    lone = remember(vault, "a note on its own", Origin(kind="cli"))
    assert load_details(vault, lone).conversation == []
    assert "In its conversation" not in details_html(load_details(vault, lone))
