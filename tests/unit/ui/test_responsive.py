"""Responsive by design (issue 35, item 6): no fixed wait before a search, a sort or a filter; fast
typing coalesces into the last query; the window opens inside the screen; a small window gives the
memory's words the room."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication

from vodou_desktop import paths
from vodou_desktop.ui.browser.window import DEFAULT_SIZE, MemoryBrowser
from vodou_desktop.ui.screen_fit import fit_on_screen


def idle_browser(qtbot, services) -> MemoryBrowser:  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: browser.memories.model.rowCount() == 5 and services.ops.pending == 0)
    return browser


def test_the_first_keystroke_searches_at_once_and_later_ones_coalesce(qtbot, services, seeded):
    browser = idle_browser(qtbot, services)
    tab = browser.memories
    tab.search_box.setText("p")
    assert services.ops.pending == 1  # started by the key itself: no timer stands between
    started = tab.controller.started
    for text in ("pn", "pnp", "pnpm"):  # typed while "p" runs: each waits for it, only the last runs
        tab.search_box.setText(text)
    assert services.ops.pending == 1
    qtbot.waitUntil(lambda: tab.model.listing.text == "pnpm" and services.ops.pending == 0)
    assert tab.controller.started == started + 1
    assert [r.fact.text for r in tab.model.results] == ["Use pnpm, not npm, in the web repository"]


def test_a_sort_and_a_filter_start_their_query_at_once(qtbot, services, seeded):
    browser = idle_browser(qtbot, services)
    tab = browser.memories
    tab.view.header().sectionClicked.emit(tab.model.columns.index("Project"))
    assert services.ops.pending >= 1
    qtbot.waitUntil(lambda: tab.model.listing.order == "project" and services.ops.pending == 0)
    tab.filters.kind.setCurrentIndex(tab.filters.kind.findData("preference"))
    assert services.ops.pending >= 1
    qtbot.waitUntil(lambda: [r.fact.text for r in tab.model.results] == ["Prefers dark mode in every editor"])


def test_a_vault_change_while_a_query_runs_is_read_after_it(qtbot, services, seeded):
    """A refresh asked while a query runs is not lost: it runs when that one answers."""
    from vodou_desktop.ingest.remember import Origin, remember

    browser = idle_browser(qtbot, services)
    tab = browser.memories
    tab.search_box.setText("editor")
    remember(services.runtime.vault, "A second editor theme: solarized", Origin("cli"))
    tab.controller.refresh()
    qtbot.waitUntil(lambda: len(tab.model.results) == 2 and services.ops.pending == 0)


def _inside(window: MemoryBrowser) -> bool:
    area = (window.screen() or QGuiApplication.primaryScreen()).availableGeometry()
    return area.contains(window.frameGeometry())


def test_the_window_opens_inside_the_screen_at_its_default_size_or_a_remembered_one(qtbot, services):
    area = QGuiApplication.primaryScreen().availableGeometry()
    assert area.width() < DEFAULT_SIZE[0] or area.height() < DEFAULT_SIZE[1] + 40  # offscreen: 800×800
    first = MemoryBrowser(services)
    qtbot.addWidget(first)
    first.raise_window()
    assert _inside(first), (first.frameGeometry(), area)
    first.close()
    settings = QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)
    huge = MemoryBrowser(services)  # a geometry remembered on a 2560×1440 monitor, placed far right
    qtbot.addWidget(huge)
    huge.setGeometry(QRect(1500, 300, 2400, 1300))
    settings.setValue("browser/geometry", huge.saveGeometry())
    settings.sync()
    huge.deleteLater()
    again = MemoryBrowser(services)
    qtbot.addWidget(again)
    assert _inside(again), (again.frameGeometry(), area)
    again.raise_window()
    assert _inside(again), (again.frameGeometry(), area)


def test_fit_on_screen_shrinks_and_moves_into_any_area(qtbot):
    from PySide6.QtWidgets import QWidget

    widget = QWidget()
    qtbot.addWidget(widget)
    for area in (QRect(0, 0, 1024, 600), QRect(1366, 0, 1280, 1024), QRect(0, 32, 1366, 736)):
        widget.setGeometry(QRect(-200, 900, 1600, 900))
        fit_on_screen(widget, area)
        assert area.contains(widget.frameGeometry()), (area, widget.frameGeometry())
        assert widget.width() >= area.width() - 20 or widget.width() == 1600


def test_at_800x560_the_memory_column_shows_the_memorys_words(qtbot, services):
    from vodou_desktop.ingest.remember import Origin, remember

    text = "The heron colony at the old mill had eleven nests this spring, two more than last year"
    remember(services.runtime.vault, text, Origin("note", url="https://en.wikipedia.org/wiki/Heron"),
             project="birds")
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.resize(800, 560)
    browser.show()
    tab = browser.memories
    qtbot.waitUntil(lambda: tab.model.result_at(0) is not None)
    qtbot.wait(50)
    view = tab.view
    room = view.columnWidth(0) - 8
    shown = len(view.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, room).rstrip("…"))
    assert shown >= 45, shown  # the memory's words, not 22 characters
    assert view.columnWidth(0) >= 0.4 * browser.width()
    assert tab.details.isVisible() and tab.details.width() >= 0.9 * view.width()  # the details under the list
