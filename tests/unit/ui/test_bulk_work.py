"""Issue 35 in the memory browser: groups that mean what they say (a project alone, with the global
memories, or the global ones alone, each with its count; operators in the search box), bulk work on an
extended selection (forget, erase, move, pin, export, each one action with one undo), and the
acceptance on a vault of 20,000 memories: "only this project" lists exactly its count, 50 rows
forgotten are 50 hidden and Ctrl+Z brings the 50 back, a correction keeps the memory's id and row.

Real widgets (offscreen), a real vault, the real ops pool; nothing is refreshed by hand."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from tests.support import run_cli
from vodou_desktop.data.sample_vault import KINDS, PROJECTS, fill_vault
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.ui.browser.window import MemoryBrowser
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.query import Scope

from .conftest import BIG, make_services

OWNER = FactFilter(project=ALL_PROJECTS)
SMALL = 40


def open_browser(qtbot, services: Services, count: int) -> MemoryBrowser:  # type: ignore[no-untyped-def]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.show()
    qtbot.waitExposed(browser)
    browser.activateWindow()  # window shortcuts (Delete, Ctrl+Z) reach only the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is browser)
    model = browser.memories.model
    qtbot.waitUntil(lambda: model.listing.complete and model.total == count and browser.memories.vault_total == count,
                    timeout=30_000)
    return browser


def click_row(qtbot, view, row: int) -> None:  # type: ignore[no-untyped-def]
    """A plain click on a row, as a person selects one memory (no key held)."""
    view.scrollTo(view.model().index(row, 0))
    rect = view.visualRect(view.model().index(row, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())


def visible(services: Services, ids: list[int]) -> int:
    return len(services.runtime.vault.read(lambda c: q.facts_by_ids(c, ids, OWNER)))


@pytest.fixture
def filled(governed: Services) -> Services:
    fill_vault(governed.runtime.vault, SMALL)
    return governed


def test_bulk_pin_move_forget_export_and_erase_act_on_the_selection(qtbot, filled, tmp_path):
    browser = open_browser(qtbot, filled, SMALL)
    tab, actions = browser.memories, browser.memories.fact_actions
    tab.select_rows(5, 14)
    chosen = tab.model.listing.ids[5:15]
    assert tab.selected_ids() == chosen and actions.ids == chosen
    assert browser.count_label.text() == f"{SMALL} memories · 10 selected"
    assert "10 memories selected" in tab.details.text()

    actions["pin"].trigger()
    qtbot.waitUntil(lambda: actions["undo"].text() == "Undo Pin 10 memories")
    pinned = filled.runtime.vault.read(lambda c: q.facts_by_ids(c, chosen, OWNER))
    assert {f.tier for f in pinned} == {"pinned"}
    qtbot.waitUntil(lambda: tab.selected_ids() == chosen)  # the selection outlives the list read again
    qtbot.waitUntil(lambda: actions["pin"].text() == "Unpin")  # once the list is read again, all pinned

    actions["move"].trigger()
    qtbot.waitUntil(lambda: actions.move_dialog is not None and actions.move_dialog.isVisible())
    dialog = actions.move_dialog
    assert [dialog.chooser.itemText(i) for i in range(1, dialog.chooser.count())] == sorted(PROJECTS)
    dialog.chooser.setCurrentIndex(dialog.chooser.findData("garden"))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    # a preference is always global, and some were in garden already: those are left as they were
    assert "preference" in KINDS and any(f.kind == "preference" for f in pinned)
    moving = sum(1 for f in pinned if f.kind != "preference" and f.project != "garden")
    assert 0 < moving < 10
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Move {moving} memories to garden")
    assert actions.bar.text.text() == f"Moved {moving} memories to garden ({10 - moving} memories left as they were)."
    moved = filled.runtime.vault.read(lambda c: q.facts_by_ids(c, chosen, OWNER))
    assert {f.project for f in moved if f.kind != "preference"} == {"garden"}
    assert sorted(f.id for f in moved) == sorted(chosen)  # every one kept its id
    qtbot.waitUntil(lambda: tab.selected_ids() == chosen)

    out = tmp_path / "chosen.jsonl"
    actions["export"].trigger()
    assert actions.export_dialog is not None and actions.export_dialog.isVisible()
    actions.export_dialog.reject()
    browser.activateWindow()  # what the window manager does when a dialog closes (offscreen has none)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is browser)
    actions.export_to(chosen, out)
    qtbot.waitUntil(lambda: out.exists() and any("Exported 10 memories" in t for _, t in filled.messages.history))
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sum(r["type"] == "memory" and r.get("superseded_by") is None for r in records) == 10

    after = tab.model.listing.ids[15]
    tab.view.setFocus()
    qtbot.keyClick(tab.view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: tab.model.total == SMALL - 10)
    assert visible(filled, chosen) == 0
    qtbot.waitUntil(lambda: tab.selected_ids() == [after])  # the next row, not nothing
    assert tab.view.currentIndex().row() == 5
    qtbot.waitUntil(lambda: actions["undo"].text() == "Undo Forget 10 memories")
    qtbot.keyClick(tab.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: tab.model.total == SMALL)
    assert visible(filled, chosen) == 10
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Move {moving} memories to garden")

    tab.select_rows(0, 2)
    erased = tab.selected_ids()
    actions["erase"].trigger()
    box = actions.confirm_box
    assert box is not None and "these 3 memories" in box.text() and "cannot be undone" in box.text()
    assert box.button(QMessageBox.StandardButton.Yes).text() == "Erase 3 memories for good"
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: tab.model.total == SMALL - 3)
    # (the export written above is a copy Vodou does not rewrite: the bar names it)
    qtbot.waitUntil(lambda: actions.bar.text.text().startswith("Erased 3 memories for good"))
    assert actions.bar.text.text().endswith(". An erase cannot be undone.")
    assert actions.bar.undo_button.isHidden()
    assert filled.runtime.vault.read(lambda c: q.facts_by_ids(c, erased, FactFilter(
        project=ALL_PROJECTS, include_forgotten=True, include_superseded=True))) == []
    assert not actions["undo"].text().startswith("Undo Erase")  # an erase is never what Undo undoes


def test_the_search_box_reads_operators_and_they_only_narrow_the_filters(qtbot, filled):
    browser = open_browser(qtbot, filled, SMALL)
    tab = browser.memories
    tab.search_box.setText("project:garden kind:note")
    qtbot.waitUntil(lambda: tab.model.listing.text == "project:garden kind:note" and tab.model.listing.complete)
    qtbot.waitUntil(lambda: tab.model.rowCount() > 0 and tab.model.result_at(tab.model.rowCount() - 1) is not None)
    shown = [tab.model.result_at(r) for r in range(tab.model.rowCount())]
    assert shown and all(r is not None and (r.fact.project, r.fact.kind) == ("garden", "note") for r in shown)
    expected = filled.runtime.vault.read(lambda c: q.count_facts(c, FactFilter(
        project="garden", global_too=False, kinds=("note",))))
    assert tab.model.total == expected
    tab.filters.choose_project("infra")  # the filter bar says infra: project:garden cannot widen it
    qtbot.waitUntil(lambda: any(k == "error" and "project garden is outside it" in t
                                for k, t in filled.messages.history))
    tab.search_box.setText("kind:bogus")
    qtbot.waitUntil(lambda: any("kind:bogus is not a kind of memory" in t for _, t in filled.messages.history))


@pytest.mark.parametrize("width", [800, 1366])
def test_the_filter_bar_keeps_site_and_tool_readable(qtbot, services, width):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.resize(width, 560 if width == 800 else 768)
    browser.show()
    qtbot.waitExposed(browser)
    filters = browser.memories.filters
    qtbot.wait(50)  # the bar's rows are laid out after the first resize
    for field in (filters.host, filters.tool):
        needed = field.fontMetrics().horizontalAdvance(field.placeholderText())
        assert field.width() >= needed, (width, field.placeholderText(), field.width())
    def one_row() -> bool:
        return filters.host.mapTo(filters, filters.host.rect().topLeft()).y() == \
            filters.project.mapTo(filters, filters.project.rect().topLeft()).y()

    qtbot.waitUntil(lambda: one_row() == (width == 1366))
    assert filters.scope.accessibleName() == "Scope" and not filters.scope.isEnabled()


# -- the acceptance, on the 20,000-memory vault the other browser tests use ----------------------

@pytest.fixture
def big_governed(big_vault_file: Path, tmp_path: Path, qtbot) -> Iterator[Services]:  # type: ignore[no-untyped-def]
    path = tmp_path / "big.db"
    shutil.copyfile(big_vault_file, path)
    vault = Vault.open(path)
    index = VectorIndex(vault)
    services = make_services(SearchService(vault, Embedder("none"), index), qtbot, forgetting=Forgetting(vault))
    yield services
    services.close()
    index.close()
    vault.close()


def test_acceptance_on_20000_memories(qtbot, big_governed):
    browser = open_browser(qtbot, big_governed, BIG)
    tab, actions, filters = browser.memories, browser.memories.fact_actions, browser.memories.filters
    vault = big_governed.runtime.vault
    counts = vault.read(lambda c: q.project_counts(c, OWNER))
    own = counts.count("garden", Scope.PROJECT_ONLY)
    assert 0 < own < counts.count("garden", Scope.PROJECT_AND_GLOBAL) < BIG

    qtbot.waitUntil(lambda: filters.choose_project("garden"))  # only this project
    qtbot.waitUntil(lambda: tab.model.listing.complete and tab.model.total == own, timeout=20_000)
    assert browser.count_label.text() == f"{own:,} of {BIG:,} shown" and filters.project.currentText() == \
        f"garden ({own:,})"
    ids = tab.model.listing.ids
    assert vault.read(lambda c: {f.project for f in q.facts_by_ids(c, ids, OWNER)}) == {"garden"}
    filters.choose_all()
    qtbot.waitUntil(lambda: tab.model.listing.complete and tab.model.total == BIG, timeout=20_000)

    tab.select_rows(100, 149)
    fifty = tab.selected_ids()
    assert len(fifty) == 50 and browser.count_label.text() == f"{BIG:,} memories · 50 selected"
    tab.view.setFocus()
    qtbot.keyClick(tab.view, Qt.Key.Key_Delete)  # Forget
    qtbot.waitUntil(lambda: tab.model.listing.complete and tab.model.total == BIG - 50, timeout=20_000)
    assert visible(big_governed, fifty) == 0 and not set(fifty) & set(tab.model.listing.ids)
    qtbot.waitUntil(lambda: actions["undo"].text() == "Undo Forget 50 memories")
    assert tab.view.currentIndex().row() == 100  # the row after the fifty
    qtbot.keyClick(tab.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: tab.model.listing.complete and tab.model.total == BIG, timeout=20_000)
    assert visible(big_governed, fifty) == 50 and set(fifty) <= set(tab.model.listing.ids)

    row = 7
    click_row(qtbot, tab.view, row)
    memory = tab.model.listing.ids[row]
    qtbot.waitUntil(lambda: tab.details.details is not None and tab.details.details.fact.id == memory)
    qtbot.keyClick(tab.view, Qt.Key.Key_F2)
    tab.details.editor.setPlainText("Corrected at scale: the heron count was nine")
    tab.details.save_button.click()
    qtbot.waitUntil(lambda: tab.details.details is not None
                    and tab.details.details.fact.text == "Corrected at scale: the heron count was nine", timeout=20_000)
    assert tab.details.details.fact.id == memory and tab.model.listing.ids[row] == memory  # its id, its row
    assert tab.selected_ids() == [memory] and tab.view.currentIndex().row() == row
    assert tab.model.total == BIG


def test_an_import_is_undone_from_its_bar_and_named_by_undo(qtbot, filled, tmp_path):
    source = tmp_path / "elsewhere.sqlite"
    with Vault.open(source) as other:
        for n in range(3):
            remember(other, f"the heron came back on day {n}", Origin(kind="cli"))
    dump = tmp_path / "herons.jsonl"
    assert run_cli("--vault", str(source), "export", str(dump)).code == 0
    browser = open_browser(qtbot, filled, SMALL)
    tab, actions = browser.memories, browser.memories.fact_actions
    browser.importer.start(dump)
    qtbot.waitUntil(lambda: tab.model.total == SMALL + 3, timeout=20_000)
    qtbot.waitUntil(lambda: actions.bar.text.text().startswith("Import finished: imported 3 memories"))
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Import 3 memories from {dump.name}")
    assert not actions.bar.undo_button.isHidden()
    actions.bar.undo_button.click()
    qtbot.waitUntil(lambda: tab.model.total == SMALL)
    qtbot.waitUntil(lambda: actions.bar.text.text().startswith("Undid “Import 3 memories"))


def test_select_all_survives_the_list_read_again(qtbot, filled):
    browser = open_browser(qtbot, filled, SMALL)
    tab, actions = browser.memories, browser.memories.fact_actions
    tab.view.setFocus()
    qtbot.keyClick(tab.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert tab.selected_ids() == tab.model.listing.ids and len(actions.ids) == SMALL
    assert browser.count_label.text() == f"{SMALL} memories · {SMALL} selected"
    actions["pin"].trigger()
    qtbot.waitUntil(lambda: actions["undo"].text() == f"Undo Pin {SMALL} memories")
    qtbot.waitUntil(lambda: len(tab.selected_ids()) == SMALL)  # every row still selected, as one range
    assert len(tab.view.selectionModel().selection()) == 1
