"""DATA-4: "Move to project…" in the memory browser: a project the vault has, or a new one named on
purpose (never one made by a typo); the memory keeps its id; the detail pane's history shows the move."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.unit.ui.test_fact_actions import open_browser, select, shown_fact
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

OWNER = FactFilter(project=ALL_PROJECTS)

PNPM = "Use pnpm, not npm, in the web repository"
DARK = "Prefers dark mode in every editor"


def test_move_to_another_project_from_the_browser(qtbot, governed, seeded):
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    select(qtbot, browser, DARK)
    assert not tab.fact_actions["move"].isEnabled()  # preferences are always global
    select(qtbot, browser, PNPM)
    assert tab.fact_actions["move"].isEnabled()
    row = tab.view.currentIndex().row()
    tab.fact_actions["move"].trigger()
    qtbot.waitUntil(lambda: tab.fact_actions.move_dialog is not None and tab.fact_actions.move_dialog.isVisible())
    dialog = tab.fact_actions.move_dialog
    choices = [dialog.chooser.itemText(i) for i in range(dialog.chooser.count())]
    assert choices == ["Global (seen from every project)", "infra", "web"] and dialog.chooser.currentText() == "web"
    move = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.new.setChecked(True)  # a new project is named on purpose, and only a new one
    dialog.new_name.setText("Web")
    move.click()
    assert dialog.problem.text() == "web exists already: choose it from the list." and dialog.isVisible()
    dialog.new_name.setText("mobile")
    move.click()
    qtbot.waitUntil(lambda: shown_fact(browser) is not None and shown_fact(browser).project == "mobile")
    assert not dialog.isVisible()
    assert shown_fact(browser).id == seeded[PNPM] and tab.view.currentIndex().row() == row  # its id, its row
    vault = governed.runtime.vault
    assert vault.read(lambda c: q.get_fact(c, seeded[PNPM], OWNER)).project == "mobile"
    body = tab.details.text()
    assert "<i>(moved from web to mobile)</i>" in body
    assert [r.project for r in tab.details.details.revisions] == ["web", "mobile"]
    qtbot.waitUntil(lambda: tab.fact_actions["undo"].text() == f"Undo Move memory #{seeded[PNPM]} to mobile"
                    " (a new project)")
    tab.fact_actions["undo"].trigger()
    qtbot.waitUntil(lambda: shown_fact(browser) is not None and shown_fact(browser).project == "web")
    assert shown_fact(browser).id == seeded[PNPM]
