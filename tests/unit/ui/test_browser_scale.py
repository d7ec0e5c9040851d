"""The memory browser over a vault of 20,000 memories (issue 24): every memory reachable, the total
in the status bar, sorting in SQL, a search that reaches its last match."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from vodou_desktop.data.sample_vault import sample_text
from vodou_desktop.ui.browser.results_model import LOADING, PAGE
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

from .conftest import BIG


def open_browser(qtbot, services) -> MemoryBrowser:  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.show()
    qtbot.waitExposed(browser)
    return browser


def last_row_read(browser: MemoryBrowser) -> bool:
    model = browser.memories.model
    return model.rowCount() > 0 and model.result_at(model.rowCount() - 1) is not None


def scroll_to_end(qtbot, browser: MemoryBrowser) -> None:  # type: ignore[no-untyped-def]
    """Ctrl+End in the list, as a person would: the view asks for the last page, an op reads it."""
    view, model = browser.memories.view, browser.memories.model
    qtbot.waitUntil(lambda: model.listing.complete, timeout=20_000)
    view.setFocus()
    if not view.currentIndex().isValid():  # the first key press only gives the list a current row
        qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: last_row_read(browser), timeout=20_000)


def click_header(qtbot, browser: MemoryBrowser, name: str) -> None:  # type: ignore[no-untyped-def]
    header = browser.memories.view.header()
    column = browser.memories.model.columns.index(name)
    pos = QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_every_memory_is_reachable_and_the_status_bar_says_the_total(qtbot, big_services):
    said: list[str] = []
    browser = MemoryBrowser(big_services)
    qtbot.addWidget(browser)
    browser.memories.results_shown.connect(lambda _n: said.append(browser.count_label.text()))
    browser.show()
    qtbot.waitUntil(lambda: browser.count_label.text() == "20,000 memories", timeout=20_000)
    assert said[0] == f"{PAGE} of 20,000 memories"  # the first page, with the total, while the rest are listed
    model = browser.memories.model
    assert model.rowCount() == BIG
    assert model.index(BIG - 1, 0).data() in (LOADING, sample_text(0))  # a row not yet read says so
    scroll_to_end(qtbot, browser)
    assert model.result_at(BIG - 1).fact.text == sample_text(0)  # the 20,000th is the oldest
    assert browser.memories.view.currentIndex().row() == BIG - 1
    read = sum(1 for i in model.listing.ids if i in model.listing.rows)
    assert read < 5 * PAGE  # only the pages drawn were read, not 20,000 rows


def test_sort_by_oldest_from_the_age_header(qtbot, big_services):
    browser = open_browser(qtbot, big_services)
    model = browser.memories.model
    qtbot.waitUntil(lambda: model.total == BIG, timeout=20_000)
    assert model.result_at(0).fact.text == sample_text(BIG - 1)
    click_header(qtbot, browser, "Age")
    qtbot.waitUntil(lambda: model.listing.order == "oldest" and model.result_at(0) is not None, timeout=20_000)
    assert [model.result_at(r).fact.text for r in range(3)] == [sample_text(n) for n in range(3)]
    assert browser.memories.view.header().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    qtbot.waitUntil(lambda: browser.count_label.text() == "20,000 memories · oldest first", timeout=20_000)
    click_header(qtbot, browser, "Project")
    qtbot.waitUntil(lambda: model.listing.order == "project" and model.result_at(0) is not None, timeout=20_000)
    assert model.result_at(0).fact.project == "atlas"
    scroll_to_end(qtbot, browser)
    assert model.result_at(BIG - 1).fact.project is None  # global memories last


def test_a_search_with_thousands_of_matches_reaches_the_last(qtbot, big_services):
    browser = open_browser(qtbot, big_services)
    tab = browser.memories
    qtbot.waitUntil(lambda: tab.model.total == BIG, timeout=20_000)
    qtbot.keyClicks(tab.search_box, "heron")
    matches = BIG // 10
    qtbot.waitUntil(lambda: browser.count_label.text() == f"{matches:,} memories match", timeout=20_000)
    assert tab.model.rowCount() == matches > 100
    top = [r.fact.id for r in big_services.runtime.search.search("heron", tab.filters.current_filter(), k=10)]
    assert [tab.model.result_at(r).fact.id for r in range(10)] == top  # the ranking search() gives
    scroll_to_end(qtbot, browser)
    last = tab.model.result_at(matches - 1)
    assert "heron" in last.fact.text and tab.model.why(matches - 1).startswith("matched 'heron'")
    tab.view.setCurrentIndex(tab.model.index(matches - 1, 0))
    qtbot.waitUntil(lambda: tab.details.details is not None and tab.details.details.fact.id == last.fact.id)
    assert "Why it matched:</b> matched 'heron'" in tab.details.text()


def test_filter_by_a_project_chosen_from_the_list(qtbot, big_services):
    browser = open_browser(qtbot, big_services)
    filters, model = browser.memories.filters, browser.memories.model
    qtbot.waitUntil(lambda: len(filters.projects()) == 6, timeout=20_000)
    vault = big_services.runtime.vault
    own = vault.read(lambda c: q.count_facts_by_project(c, FactFilter(project=ALL_PROJECTS)))
    alone = vault.read(lambda c: q.count_facts(c, FactFilter(project=None)))
    shown = [filters.project.itemText(i) for i in range(filters.project.count())]
    assert shown == ["All projects", f"Global only ({alone:,})", *(f"{name} ({own[name]:,})" for name in sorted(own))]
    filters.project.setFocus()
    filters.project.showPopup()  # chosen from the list, as a person does
    view = filters.project.view()
    view.setCurrentIndex(filters.project.model().index(filters.project.findData("garden"), 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    # only this project first: the list holds the count its name says
    qtbot.waitUntil(lambda: browser.count_label.text() == f"{own['garden']:,} of {BIG:,} shown", timeout=20_000)
    filters.scope.setCurrentIndex(1)  # this project + global
    with_global = vault.read(lambda c: q.count_facts(c, FactFilter(project="garden")))
    qtbot.waitUntil(lambda: browser.count_label.text() == f"{with_global:,} of {BIG:,} shown", timeout=20_000)
    assert with_global > own["garden"]  # its memories and the global ones
    scroll_to_end(qtbot, browser)
    assert {model.result_at(r).fact.project for r in range(model.rowCount()) if model.result_at(r)} == {"garden", None}
