"""The memory browser as a desktop window (issue 14, defect 8): menu bar, Add memory, Import with
progress and Cancel, and the Memories tab used with the keyboard alone."""

from __future__ import annotations

import json
import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QPushButton

from vodou_desktop.ui.actions import NOT_YET
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.ui.import_work import import_job
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q


def open_browser(qtbot, services) -> MemoryBrowser:  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.show()
    qtbot.waitExposed(browser)
    browser.activateWindow()
    return browser


def titles(menu) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def texts(browser: MemoryBrowser) -> list[str]:
    return [r.fact.text for r in browser.memories.model.results]


def test_menu_bar_has_file_edit_view_help(qtbot, services, seeded):
    browser = open_browser(qtbot, services)
    bar = [a.text() for a in browser.menuBar().actions()]
    assert bar == ["&File", "&Edit", "&View", "&Tools", "&Help"]
    assert titles(browser.menus["file"]) == ["Add memory…", "Import…", "Back up…", "Restore…", "Export…",
                                             "Pair browser extension…", "Settings…", "Quit Vodou"]
    assert titles(browser.menus["edit"]) == ["Undo", "Correct…", "Pin", "Move to project…", "Forget",
                                             "Erase…", "Export selected…", "Link to page…"]
    assert titles(browser.menus["help"]) == ["Welcome and setup…", "Keyboard shortcuts", "About Vodou"]
    for name in ("backup", "restore", "export"):
        assert not browser.actions[name].isEnabled() and browser.actions[name].toolTip() == NOT_YET
    backfill = browser.actions["backfill"]  # keyword search only here: nothing to embed with
    assert not backfill.isEnabled() and "not available" in backfill.toolTip()
    dialog = browser.show_shortcuts()
    shown = dialog.table.text()
    assert "Ctrl+N" in shown and "Add memory…" in shown and "F2" in shown and "Correct…" in shown


def test_add_memory_saves_with_its_project_and_a_preference_stays_global(qtbot, services, seeded):
    browser = open_browser(qtbot, services)
    qtbot.waitUntil(lambda: len(texts(browser)) == 5)
    browser.actions["add_memory"].trigger()
    dialog = browser.dialogs[-1]
    qtbot.waitUntil(lambda: dialog.project.findText("infra") >= 0)  # the projects that hold memories
    qtbot.keyClicks(dialog.text, "The heron nests by the old mill")
    dialog.project.setCurrentText("birds")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    qtbot.waitUntil(lambda: "The heron nests by the old mill" in texts(browser))
    fact = next(r.fact for r in browser.memories.model.results if r.fact.text.startswith("The heron"))
    assert (fact.project, fact.kind, fact.source_kind, fact.tool) == ("birds", "fact", "panel", "app")
    assert not dialog.isVisible()
    pref = browser.add_memory()
    pref.kind.setCurrentText("preference")
    assert not pref.project.isEnabled() and "stays global" in pref.note.text()
    pref.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert pref.problem.text() == "Type the memory first." and pref.isVisible()


def _export(tmp_path, n: int):  # type: ignore[no-untyped-def]
    convs = [{"id": f"c{i}", "title": f"chat {i}", "mapping": {"a": {"id": "a", "message": {
        "id": f"m{i}", "author": {"role": "user"}, "content": {"parts": [f"I keep bees number {i}."]},
        "create_time": 1.7e9}}}} for i in range(n)]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs))
    return path


def test_import_shows_progress_and_cancel_stops_it(qtbot, services, tmp_path):
    browser = open_browser(qtbot, services)
    importer = browser.importer
    reached, release = threading.Event(), threading.Event()

    def hold_at_three(done: int, _total: int) -> None:  # runs in the worker: the import waits here
        if done == 3:
            reached.set()
            release.wait(10)

    job = import_job(services.runtime.vault, _export(tmp_path, 12))
    job.progressed.connect(hold_at_three, Qt.ConnectionType.DirectConnection)
    importer_job = importer.start_job(job)
    assert importer_job is job and importer.dialog.isVisible()
    qtbot.waitUntil(reached.is_set, timeout=10000)
    cancel = next(b for b in importer.dialog.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert job.cancelled
    release.set()
    qtbot.waitUntil(lambda: importer.last_summary != "", timeout=10000)
    assert importer.last_summary.startswith("Import cancelled. 3 conversations of 12 imported from chatgpt")
    report = importer.last_report
    assert report is not None and (report.imported, report.conversations) == (3, 12)
    count = services.runtime.vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert count == report.facts  # only what the three conversations gave
    qtbot.waitUntil(lambda: not importer.dialog.isVisible())


def test_import_of_an_unknown_file_says_why(qtbot, services, tmp_path):
    browser = open_browser(qtbot, services)
    path = tmp_path / "notes.json"
    path.write_text(json.dumps([{"hello": "world"}]))
    browser.importer.start(path)
    qtbot.waitUntil(lambda: browser.importer.last_summary != "", timeout=10000)
    assert "neither a ChatGPT nor a Claude" in browser.importer.last_summary


def test_memories_tab_by_keyboard_alone(qtbot, governed, seeded):
    """Search → select → correct → forget → undo forget, with keys only."""
    browser = open_browser(qtbot, governed)
    tab = browser.memories
    qtbot.waitUntil(lambda: len(texts(browser)) == 5)
    qtbot.keyClick(browser, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is tab.search_box
    qtbot.keyClicks(tab.search_box, "pnpm")
    qtbot.waitUntil(lambda: texts(browser) == ["Use pnpm, not npm, in the web repository"])
    qtbot.keyClick(tab.search_box, Qt.Key.Key_Return)
    assert QApplication.focusWidget() is tab.view
    qtbot.waitUntil(lambda: tab.details.details is not None)
    qtbot.keyClick(tab.view, Qt.Key.Key_F2)
    editor = tab.details.editor
    qtbot.waitUntil(lambda: editor.isVisible() and QApplication.focusWidget() is editor)
    qtbot.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor, "Use pnpm everywhere")
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not editor.isVisible())
    qtbot.keyClick(tab.search_box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(tab.search_box, "everywhere")
    qtbot.waitUntil(lambda: texts(browser) == ["Use pnpm everywhere"])
    qtbot.keyClick(tab.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: tab.details.details is not None and tab.details.details.fact.text == "Use pnpm everywhere")
    qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: texts(browser) == [])
    assert tab.fact_actions["undo"].isEnabled()
    qtbot.keyClick(tab.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: texts(browser) == ["Use pnpm everywhere"])


def test_empty_states_say_what_to_do(qtbot, services):
    browser = open_browser(qtbot, services)
    tab = browser.memories
    qtbot.waitUntil(lambda: tab.empty.isVisible())
    said = tab.empty.text()
    assert "Your memory is empty" in said and "Add memory…" in said and "Import…" in said and "Pair" in said
    assert browser.count_label.text() == "0 memories"
    browser.tabs.setCurrentWidget(browser.library)
    qtbot.waitUntil(lambda: browser.library.empty.isVisible())
    assert "Add page to Library" in browser.library.empty.text()
    assert browser.count_label.text() == "0 Library pages"


def test_no_results_say_what_was_searched_and_the_filters(qtbot, services, seeded):
    browser = open_browser(qtbot, services)
    tab = browser.memories
    qtbot.waitUntil(lambda: len(texts(browser)) == 5)
    assert not tab.empty.isVisible() and browser.count_label.text() == "5 memories"
    tab.filters.kind.setCurrentText("preference")
    qtbot.keyClicks(tab.search_box, "heron")
    qtbot.waitUntil(lambda: tab.empty.isVisible())
    assert tab.empty.text() == ("<b>No memories match “heron”</b> with these filters: kind preference. "
                                "Try other words, or clear the filters.")
    tab.search_box.setText("pnpm")
    tab.filters.kind.setCurrentText("Any kind")
    qtbot.waitUntil(lambda: browser.count_label.text() == "1 memory matches")
    browser.tabs.setCurrentWidget(browser.library)
    qtbot.waitUntil(lambda: browser.count_label.text() == "1 Library page")  # the visible tab's count


def _named(widget, buddies) -> bool:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QAbstractButton

    if widget.accessibleName() or widget in buddies:
        return True
    return isinstance(widget, QAbstractButton) and bool(widget.text().replace("&", "").strip())


def test_every_control_can_be_reached_and_has_an_accessible_name(qtbot, governed, seeded):
    from PySide6.QtWidgets import QAbstractScrollArea, QComboBox, QLabel, QTabBar, QWidget

    browser = open_browser(qtbot, governed)
    unnamed = []
    for tab in range(browser.tabs.count()):
        browser.tabs.setCurrentIndex(tab)
        qtbot.wait(30)
        page = browser.tabs.currentWidget()
        buddies = {label.buddy() for label in page.findChildren(QLabel) if label.buddy() is not None}
        for widget in page.findChildren(QWidget):
            if not widget.isVisibleTo(page) or widget.focusPolicy() == Qt.FocusPolicy.NoFocus:
                continue
            if isinstance(widget, QTabBar) or isinstance(widget.parent(), (QAbstractScrollArea, QComboBox)):
                continue  # the tab bar names its tabs; a viewport or a combo's editor is named by its owner
            if not _named(widget, buddies):
                unnamed.append(f"{browser.tabs.tabText(tab)}: {type(widget).__name__} {widget.objectName()}")
    assert unnamed == [], "\n".join(unnamed)


def test_the_window_remembers_its_size_in_vodous_config_folder(qtbot, services):
    from vodou_desktop import paths

    browser = open_browser(qtbot, services)
    browser.resize(790, 560)
    browser.close()
    assert (paths.config_dir() / "window.ini").exists()
    again = open_browser(qtbot, services)
    assert (again.width(), again.height()) == (790, 560)


def test_import_asks_for_a_project_and_files_the_memories_under_it(qtbot, services, tmp_path, monkeypatch):
    """File ▸ Import… has the CLI's --project: the dialog lists the vault's projects, takes a new name, and
    refuses a name no project can have (said in the dialog, nothing imported)."""
    from PySide6.QtWidgets import QDialog, QFileDialog

    from vodou_desktop.ui import import_work

    browser = open_browser(qtbot, services)
    importer = browser.importer
    options = import_work.ImportOptions(["atlas", "thesis"])
    assert [options.project.itemText(i) for i in range(options.project.count())] == [
        import_work.NO_PROJECT, "atlas", "thesis"]
    assert options.chosen() is None  # the default: global
    options.project.setEditText("bad\nname")
    options._accept()
    assert options.error.isVisibleTo(options) and "single line" in options.error.text() and options.result() == 0
    path = _export(tmp_path, 2)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))

    def pick_thesis(dialog: import_work.ImportOptions) -> int:
        dialog.project.setCurrentIndex(dialog.project.findText("thesis"))
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(import_work.ImportOptions, "exec", pick_thesis)
    monkeypatch.setattr(importer, "_projects", lambda: ["atlas", "thesis"])
    importer.choose_and_start()
    qtbot.waitUntil(lambda: importer.last_summary != "", timeout=10000)
    assert importer.last_summary.startswith("Import finished. 2 conversations of 2 imported from chatgpt into thesis")
    facts = services.runtime.vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert facts and {f.project for f in facts} == {"thesis"}
