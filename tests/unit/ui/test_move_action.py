"""DATA-4: "Move to project…" in the memory browser; the detail pane's history shows the move."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.unit.ui.test_fact_actions import open_browser, select, shown_fact

PNPM = "Use pnpm, not npm, in the web repository"
DARK = "Prefers dark mode in every editor"


def test_move_to_another_project_from_the_browser(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    select(qtbot, browser, DARK)
    assert not tab.fact_actions["move"].isEnabled()  # preferences are always global
    select(qtbot, browser, PNPM)
    assert tab.fact_actions["move"].isEnabled()
    tab.fact_actions["move"].trigger()
    prompt = tab.fact_actions.prompt
    assert prompt is not None and prompt.text() == "web"
    prompt.set_text("mobile")
    prompt.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: shown_fact(browser) is not None and shown_fact(browser).project == "mobile")
    body = tab.details.text()
    assert "<i>(moved from web to mobile)</i>" in body
    assert [r.project for r in tab.details.details.revisions] == ["web", "mobile"]
