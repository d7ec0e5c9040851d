"""The memory browser's details show a memory's neighbour turns in its conversation."""

from __future__ import annotations

import html

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.browser.details import details_html, load_details
from vodou_desktop.vault import FactFilter, Vault
from vodou_desktop.vault import query as q


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


def test_details_show_the_message_a_memory_came_from(vault: Vault, tmp_path) -> None:
    """ING-6: a distilled memory shows the person's message it came from; a turn kept whole says so; a
    decision kept from an accepted reply shows the message that accepted it."""
    import json

    from tests.unit.ingest.test_conversation_memory import CHAT, chatgpt_export
    from vodou_desktop.ingest.importer import import_export

    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export(CHAT)), encoding="utf-8")
    import_export(vault, path, "chatgpt")
    facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=None), limit=100))
    by_text = {f.text: f for f in facts}
    distilled = load_details(vault, by_text["I'm starting remote work three days a week from June 15."].id)
    body = html.unescape(details_html(distilled))
    assert "From your message" in body and "how can I plan my budget?" in body
    turn = load_details(vault, by_text[CHAT[0][1]].id)
    assert "kept whole as this memory" in details_html(turn)
    accepted = next(f for f in facts if f.text.startswith("Accepted the assistant's"))
    body = html.unescape(details_html(load_details(vault, accepted.id)))
    assert "From the assistant's reply" in body and "which you accepted in your next message" in body
    assert "I'll track my expenses in YNAB" in body and "Confidence</i></td><td>80%" in body
    typed = remember(vault, "a note typed by hand", Origin(kind="cli"))
    assert "From your message" not in details_html(load_details(vault, typed))
