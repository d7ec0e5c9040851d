"""Actions on one memory in the memory browser: correct, pin, forget / undo, erase, link to page.

Each test drives the real actions and dialogs over a real vault; the views refresh from the
vault's change events (no test calls refresh).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from vodou_desktop.errors import NotFound
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

DARK = "Prefers dark mode in every editor"
PNPM = "Use pnpm, not npm, in the web repository"
OWNER = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def shown_texts(browser: MemoryBrowser) -> list[str]:
    return [r.fact.text for r in browser.memories.model.results]


def open_browser(qtbot, services) -> MemoryBrowser:  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)
    return browser


def select(qtbot, browser: MemoryBrowser, text: str) -> None:  # type: ignore[no-untyped-def]
    tab = browser.memories
    row = shown_texts(browser).index(text)
    tab.view.setCurrentIndex(tab.model.index(row, 0))
    qtbot.waitUntil(lambda: tab.details.details is not None and tab.details.details.fact.text == text)


def shown_fact(browser: MemoryBrowser):  # type: ignore[no-untyped-def]
    details = browser.memories.details.details
    return details.fact if details else None


def test_correct_in_place_keeps_the_id_the_row_and_the_selection(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    select(qtbot, browser, DARK)
    row = shown_texts(browser).index(DARK)
    tab.fact_actions["correct"].trigger()
    pane = tab.details
    assert not pane.editing.isHidden() and pane.editor.toPlainText() == DARK  # in the details pane, no dialog
    pane.editor.setPlainText("  ")
    pane.save_button.click()
    assert pane.edit_problem.text() == "Nothing typed yet." and not pane.editing.isHidden()
    pane.editor.setPlainText("Prefers light mode in every editor")
    pane.save_button.click()
    qtbot.waitUntil(lambda: shown_fact(browser) is not None
                    and shown_fact(browser).text == "Prefers light mode in every editor")
    assert pane.editing.isHidden()
    assert shown_fact(browser).id == seeded[DARK]  # the memory keeps its id
    assert tab.selected_ids() == [seeded[DARK]] and tab.view.currentIndex().row() == row  # and its row
    assert shown_texts(browser)[row] == "Prefers light mode in every editor" and DARK not in shown_texts(browser)
    body = tab.details.text()
    assert "History</b> (earlier texts are kept here, never recalled)" in body
    assert f"r1: {DARK} <i>(superseded — never recalled)</i>" in body
    assert "<b>r2: Prefers light mode in every editor</b>" in body
    assert [r.revision for r in tab.details.details.revisions] == [1, 2]
    qtbot.waitUntil(lambda: tab.fact_actions["undo"].text() == f"Undo Correct memory #{seeded[DARK]}")
    assert not tab.fact_actions.bar.isHidden() and not tab.fact_actions.bar.undo_button.isHidden()
    tab.fact_actions.bar.undo_button.click()  # the bar's Undo: the earlier text back, same id
    qtbot.waitUntil(lambda: shown_fact(browser) is not None and shown_fact(browser).text == DARK)
    assert shown_fact(browser).id == seeded[DARK]


def test_a_correction_being_typed_survives_the_list_read_again(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    select(qtbot, browser, DARK)
    tab.fact_actions["correct"].trigger()
    tab.details.editor.setPlainText("Prefers dark mode, half typed")
    remember(governed.runtime.vault, "Written meanwhile by a capture", Origin("cli"))  # the vault changes
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 6)
    qtbot.wait(200)
    assert not tab.details.editing.isHidden() and tab.details.editor.toPlainText() == "Prefers dark mode, half typed"
    assert tab.selected_ids() == [seeded[DARK]]


def test_pin_and_unpin_change_the_tier(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    select(qtbot, browser, PNPM)
    assert tab.fact_actions["pin"].text() == "Pin"
    tab.fact_actions["pin"].trigger()
    qtbot.waitUntil(lambda: shown_fact(browser).tier == "pinned")
    assert tab.fact_actions["pin"].text() == "Unpin"
    assert "<i>Pinned</i> yes" in tab.details.text()
    tab.filters.tier.setCurrentText("pinned")
    qtbot.waitUntil(lambda: shown_texts(browser) == [PNPM])
    tab.fact_actions["pin"].trigger()
    qtbot.waitUntil(lambda: shown_texts(browser) == [])
    fact = governed.runtime.vault.read(lambda c: q.get_fact(c, seeded[PNPM], OWNER))
    assert fact.tier == "first_party"


def test_forget_hides_until_show_forgotten_and_undo_brings_it_back(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    actions = tab.fact_actions
    select(qtbot, browser, PNPM)
    assert not actions["undo"].isEnabled() and actions["undo"].text() == "Undo"
    actions["forget"].trigger()
    qtbot.waitUntil(lambda: PNPM not in shown_texts(browser))
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Forget memory #{seeded[PNPM]}")
    assert actions["undo"].isEnabled()  # the last action, though what it hid is not in the list
    qtbot.waitUntil(lambda: actions.bar.text.text() == "Forgot 1 memory.")
    assert not actions.bar.undo_button.isHidden()
    actions["undo"].trigger()
    qtbot.waitUntil(lambda: PNPM in shown_texts(browser))
    qtbot.waitUntil(lambda: not actions["undo"].isEnabled())  # nothing else to undo
    assert actions.bar.text.text().startswith("Undid “Forget memory #") and actions.bar.undo_button.isHidden()
    select(qtbot, browser, PNPM)
    actions["forget"].trigger()
    qtbot.waitUntil(lambda: PNPM not in shown_texts(browser))
    select(qtbot, browser, DARK)
    actions["pin"].trigger()  # a later action: Undo now names it
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Pin memory #{seeded[DARK]}")
    tab.filters.forgotten.setChecked(True)
    qtbot.waitUntil(lambda: PNPM in shown_texts(browser))
    row = shown_texts(browser).index(PNPM)
    assert tab.model.index(row, 0).data().endswith("(forgotten)")
    select(qtbot, browser, PNPM)
    assert not actions["forget"].isEnabled()
    # the forgotten memory selected: Undo is the forget that hid it, though it is not the last action
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Forget memory #{seeded[PNPM]}")
    assert "Forgotten" in tab.details.text() and "Edit ▸ Undo brings it back" in tab.details.text()
    actions["undo"].trigger()
    qtbot.waitUntil(lambda: not shown_fact(browser).forgotten)
    dark = governed.runtime.vault.read(lambda c: q.get_fact(c, seeded[DARK], OWNER))
    assert dark.tier == "pinned"  # the later pin is left as it is
    tab.filters.forgotten.setChecked(False)
    qtbot.waitUntil(lambda: PNPM in shown_texts(browser) and len(shown_texts(browser)) == 5)


def test_erase_needs_the_confirmation_and_cancel_changes_nothing(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    actions = browser.memories.fact_actions
    vault = governed.runtime.vault
    select(qtbot, browser, DARK)
    actions["erase"].trigger()
    box = actions.confirm_box
    assert box is not None and box.isVisible() and DARK in box.text()
    assert "cannot be undone" in box.text() and box.button(QMessageBox.StandardButton.Yes).text() == \
        "Erase 1 memory for good"
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(200)
    assert governed.ops.pending == 0
    assert vault.read(lambda c: q.get_fact(c, seeded[DARK], OWNER)).text == DARK
    assert DARK in shown_texts(browser)
    actions["erase"].trigger()
    actions.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: DARK not in shown_texts(browser))
    qtbot.waitUntil(lambda: actions.bar.text.text() == "Erased 1 memory for good. An erase cannot be undone.")
    assert actions.bar.undo_button.isHidden()  # the UI says it is final, and offers no undo
    with pytest.raises(NotFound):
        vault.read(lambda c: q.get_fact(c, seeded[DARK], OWNER))


def test_link_to_page_obeys_the_site_mode(qtbot, governed, seeded):
    governed.sites.set_rule("closed.example.com", "off")
    browser = open_browser(qtbot, governed)
    actions = browser.memories.fact_actions
    select(qtbot, browser, PNPM)
    actions["link"].trigger()
    prompt = actions.prompt
    prompt.set_text("https://closed.example.com/handbook")
    prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    refusal = "saving from closed.example.com is not allowed: the site mode is off"
    qtbot.waitUntil(lambda: refusal in prompt.problem.text())
    assert prompt.isVisible()
    assert any(kind == "error" and refusal in text for kind, text in governed.messages.history)
    assert shown_fact(browser).page_url is None
    prompt.set_text("https://open.example.org/handbook")
    prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: shown_fact(browser).page_url == "https://open.example.org/handbook")
    assert not prompt.isVisible()
    assert 'Linked to page (manual): <a href="https://open.example.org/handbook">' in browser.memories.details.text()


def test_the_context_menu_holds_the_same_actions(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    view_actions = browser.memories.view.actions()
    assert [a.objectName() for a in view_actions] == ["fact.correct", "fact.pin", "fact.move", "fact.forget",
                                                      "fact.undo", "fact.erase", "fact.export", "fact.link"]
    assert not any(a.isEnabled() for a in view_actions)  # nothing selected yet
    select(qtbot, browser, DARK)
    # a preference is always global, so it has no Move
    assert all(a.isEnabled() for a in view_actions if a.objectName() not in ("fact.undo", "fact.move"))


def show_active(qtbot, browser: MemoryBrowser) -> None:  # type: ignore[no-untyped-def]
    """Shown and active: window shortcuts (Delete, Ctrl+Z) reach only the active window."""
    browser.show()
    qtbot.waitExposed(browser)
    browser.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is browser)


def test_forget_and_undo_from_the_keyboard(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    show_active(qtbot, browser)
    tab = browser.memories
    select(qtbot, browser, DARK)
    tab.view.setFocus()
    qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: DARK not in shown_texts(browser))
    qtbot.waitUntil(lambda: tab.fact_actions.bar.text.text() == "Forgot 1 memory.")
    qtbot.waitUntil(lambda: tab.fact_actions["undo"].isEnabled())
    qtbot.keyClick(tab.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: DARK in shown_texts(browser))
    undone = f"Undid “Forget memory #{seeded[DARK]}” (just now): 1 memory visible again"
    qtbot.waitUntil(lambda: tab.fact_actions.bar.text.text() == undone)


def test_a_library_page_is_forgotten_undone_and_erased_from_the_keyboard(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    show_active(qtbot, browser)
    library = browser.library
    browser.tabs.setCurrentWidget(library)
    qtbot.waitUntil(lambda: library.model.rowCount() == 1)
    library.view.setFocus()
    library.view.setCurrentIndex(library.model.index(0, 0))
    assert library.actions["forget"].isEnabled() and not library.actions["undo"].isEnabled()
    assert not browser.memories.fact_actions["forget"].isEnabled()  # Delete is the Library's here
    qtbot.keyClick(library.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: library.model.rowCount() == 0)
    assert browser.statusBar().currentMessage() == "Library page forgotten. Undo forget (Ctrl+Z) brings it back."
    assert governed.runtime.vault.read(lambda c: q.count_documents(c, FactFilter(project=ALL_PROJECTS))) == 0
    qtbot.keyClick(library.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: library.model.rowCount() == 1)
    assert browser.statusBar().currentMessage() == "Undone: 1 Library page back"
    library.view.setCurrentIndex(library.model.index(0, 0))
    qtbot.keyClick(library.view, Qt.Key.Key_Delete, Qt.KeyboardModifier.ShiftModifier)
    assert "for good" in library.confirm_box.text()
    library.confirm_box.button(QMessageBox.StandardButton.Cancel).click()
    assert library.model.rowCount() == 1
    library.erase()
    library.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: library.model.rowCount() == 0)
    everything = FactFilter(project=ALL_PROJECTS, include_forgotten=True)
    assert governed.runtime.vault.read(lambda c: q.count_documents(c, everything)) == 0  # gone for good
