"""One vocabulary, finished (issue 35, item 9): every window the app shows, and the extension's panel,
read as a person reads them (titles, labels, buttons, menus, choices, placeholders, tooltips, every
list's cells and headers), and none says a word the last reviews took out.

The words a person reads are enumerated from the live widgets, not from the source, so a new window
or a new label is read too; each leftover has a check of its own (a test per word), and a last test
shows that each check finds the phrase it was written for. The structural leftovers are enumerated
too: a label showing a literal "&", a tab without its View menu entry, a kind the list shows that the
Kind filter cannot choose.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from tests.unit.ui.test_desktop import EXT, PAGE, desktop, report_page  # noqa: F401  (the composed app)
from vodou_desktop import resources
from vodou_desktop.governance.approvals import Turn
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.ui.browser.move_dialog import MoveDialog
from vodou_desktop.ui.forget_dialog import ForgetSiteDialog
from vodou_desktop.ui.pair_dialog import PairDialog
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.ui.tray import build_menu
from vodou_desktop.words import LIST_KINDS, kind_words

# Each leftover: what it looked like, and the word the app uses instead.
LEFTOVERS = {
    "add note": (r"\badd (a )?&?note\b", "Add memory…: a person adds memories; note is one of their kinds"),
    "note heading": (r"(?-i:^Note$)", "Add a memory (the extension's composer; “note” stays a kind's name)"),
    "library documents": (r"\blibrary documents?\b", "Library pages, as the tab and the counts say"),
    "tier": (r"(?<![\w-])t&?ier\b", "Trust: the word the details pane and the CLI use"),
    "reauthorize": (r"\breauthori[sz]", "Renew"),
    "n of ceiling": (r"^\w[\w ]* — \d+ of \d+$", "“Preferences — 1 note (at most 12)”"),
    "kept in memory": (r"\bkept in (this process's )?memory\b", "“It is not saved: it ends when you quit Vodou”"),
    "extension id": (r"\(extension [a-p]{3,}", "the browser's name alone (the id is in the tooltip)"),
    "fact group": (r"\bfact group\b|\(canonical\)", "“Near-duplicates of this memory”, “(the one ranked first)”"),
}


def leftovers_in(text: str, name: str) -> bool:
    return re.search(LEFTOVERS[name][0], text.strip(), re.IGNORECASE | re.MULTILINE) is not None


def _model_texts(view: QAbstractItemView) -> list[str]:
    model, found = view.model(), []
    if model is None:
        return found

    listing = isinstance(model, QAbstractListModel)  # one column (its columnCount is not public)

    def walk(parent: QModelIndex, depth: int) -> None:
        for row in range(min(model.rowCount(parent), 200)):
            for column in range(1 if listing else model.columnCount(parent)):
                index = model.index(row, column, parent)
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    value = index.data(role)
                    if isinstance(value, str):
                        found.append(value)
            if depth < 3 and not listing:
                walk(model.index(row, 0, parent), depth + 1)

    walk(QModelIndex(), 0)
    for column in range(1 if listing else model.columnCount()):
        header = model.headerData(column, Qt.Orientation.Horizontal)
        if isinstance(header, str):
            found.append(header)
    return found


def widget_texts(top: QWidget) -> list[str]:
    """Everything ``top`` and its children say in words."""
    texts = [top.windowTitle(), top.toolTip()]
    for widget in [top, *top.findChildren(QWidget)]:
        texts.append(widget.toolTip())
        if isinstance(widget, QLabel):
            texts.append(widget.text())
        elif isinstance(widget, QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QLineEdit):
            texts += [widget.placeholderText(), widget.text()]
        elif isinstance(widget, QPlainTextEdit):
            texts.append(widget.placeholderText())
        elif isinstance(widget, QTextEdit):  # the details pane's body: the memory, its history, its group
            texts += [widget.placeholderText(), widget.toPlainText()]
        elif isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QTabWidget):
            texts += [widget.tabText(i) for i in range(widget.count())]
        if isinstance(widget, QAbstractItemView):
            texts += _model_texts(widget)
        for action in QWidget.actions(widget):  # (the browser names its registry "actions")
            texts += [action.text(), action.toolTip(), action.iconText()]
        if isinstance(widget, QMenu):
            texts.append(widget.title())
    return [t for t in texts if t]


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.found.append(" ".join(data.split()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [v for k, v in attrs if k in ("title", "placeholder", "aria-label") and v]


def extension_texts() -> list[str]:
    """The extension's words: its pages' text and attributes, and every string in its scripts."""
    root = Path(resources.resource_path("extension"))
    found: list[str] = []
    for page in root.glob("*.html"):
        parser = _Text()
        parser.feed(page.read_text(encoding="utf-8"))
        found += parser.found
    for script in root.rglob("*.js"):
        found += re.findall(r"'([^'\n]{3,})'|`([^`\n]{3,})`|\"([^\"\n]{3,})\"", script.read_text(encoding="utf-8"))
    return [t if isinstance(t, str) else next(p for p in t if p) for t in found]


@pytest.fixture
def every_window(qtbot, desktop):  # noqa: F811
    """The composed app with something in every view, and each window a person opens from it."""
    vault = desktop.runtime.vault
    remember(vault, "Herons hunt by standing still", Origin("note", url=PAGE, title="A story"), project="birds")
    remember(vault, "Use pnpm, not npm", Origin("cli"), project="web", kind="decision")
    remember(vault, "Text selected on the page", Origin("selection", url=PAGE, title="A story"))
    save_document(vault, "# A story\n\nIts body.", Origin("library", url=PAGE, title="A story"))
    opm = OperatorMemory(vault)
    opm.add("preference", "Answer in British English")
    desktop.bridge.tokens.pair(EXT, "Chromium")
    desktop.bridge_services.gate.submit("remember", {"text": "From a page"}, Turn(None, has_page_content=True))
    report_page(qtbot, desktop)
    desktop.browser.refresh()
    qtbot.waitUntil(lambda: desktop.browser.memories.model.rowCount() == 3, timeout=5000)
    windows: list[QWidget] = [desktop.browser, desktop.panel, build_menu(desktop.actions)]
    for name in ("search", "add"):
        desktop.quick.summon(name)
        qtbot.waitUntil(lambda: desktop.services.ops.pending == 0, timeout=5000)
        windows.append(desktop.quick)
    settings = SettingsDialog(desktop.services, desktop.sites, desktop.bridge.tokens,
                              vault_path=desktop.runtime.vault.path)
    qtbot.addWidget(settings)
    forget = ForgetSiteDialog(desktop.forgetting, desktop.services.ops, "news.example.com")
    qtbot.addWidget(forget)
    forget.run_dry_run()
    paired = PairDialog(None, desktop.services.ops, code={"code": "ABCD2345"})
    qtbot.addWidget(paired)
    paired.paired({"extensionId": EXT, "browser": "Chromium"})
    qtbot.waitUntil(lambda: desktop.services.ops.pending == 0 and forget.step == "confirm", timeout=5000)
    move = MoveDialog(2, ["birds", "web"], "birds")
    qtbot.addWidget(move)
    windows += [settings, forget, paired, move, *desktop.commands._dialogs]
    windows += [w for w in QApplication.topLevelWidgets() if w.isVisible() and w not in windows]
    memories = desktop.browser.memories
    memories.view.setCurrentIndex(memories.model.index(0, 0))  # the details pane shows a memory
    qtbot.waitUntil(lambda: memories.details.details is not None, timeout=5000)
    texts: list[str] = []
    for tab in range(desktop.browser.tabs.count()):  # each tab drawn once, its contents read
        desktop.browser.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
        qtbot.waitUntil(lambda: desktop.services.ops.pending == 0, timeout=5000)
        texts += widget_texts(desktop.browser)
    for window in windows:
        texts += widget_texts(window)
    said = [text for _kind, text in desktop.services.messages.history]
    return {"app": texts + said, "extension": extension_texts(), "desktop": desktop}


@pytest.mark.parametrize("leftover", sorted(LEFTOVERS))
def test_no_window_says_a_leftover_word(every_window, leftover):
    found = sorted({t for t in every_window["app"] + every_window["extension"] if leftovers_in(t, leftover)})
    assert found == [], f"say {LEFTOVERS[leftover][1]} instead of: {found}"


def test_the_reading_reaches_every_window(every_window):
    """The enumeration reads what it must, so a leftover there would be seen."""
    said = "\n".join(every_window["app"])
    for expected in ("Operator memory", "Approvals", "AI tools", "Quick access", "Add memory…", "Search…",
                     "Renew", "Paired with Chromium.", "Forget 2 memories", "Library pages", "Herons hunt",
                     "A new project named:", "Only this project", "Export selected…", "<i>Saved</i>"):
        assert expected in said, expected
    assert "Add a memory" in every_window["extension"] and len(every_window["extension"]) > 50


def test_no_label_shows_a_literal_ampersand(every_window):
    """A mnemonic marks a label that names a field (its buddy); without one the "&" is drawn as is."""
    app = every_window["desktop"]
    settings = SettingsDialog(app.services, app.sites, app.bridge.tokens, vault_path=app.runtime.vault.path)
    windows = [app.browser, settings,
               app.quick, app.panel]
    shown = [label.text() for window in windows for label in window.findChildren(QLabel)
             if re.search(r"&\w", label.text()) and label.buddy() is None
             and label.textFormat() != Qt.TextFormat.RichText and "<" not in label.text()]
    assert shown == []


def test_every_tab_has_its_view_menu_entry(every_window):
    browser = every_window["desktop"].browser
    view = [a.text() for a in browser.menus["view"].actions()]
    missing = [browser.tabs.tabText(i) for i in range(browser.tabs.count())
               if f"{browser.tabs.tabText(i).replace('&', '')} tab" not in view]
    assert missing == []


def test_the_kind_filter_can_choose_every_kind_the_list_shows(every_window):
    kinds = every_window["desktop"].browser.memories.filters.kind
    choosable = {kinds.itemData(i) for i in range(kinds.count())}
    assert set(LIST_KINDS) <= choosable
    assert {kinds.itemText(i) for i in range(kinds.count())} >= {kind_words(k) for k in LIST_KINDS}


@pytest.mark.parametrize("leftover, said", [
    ("add note", "Add &note…"), ("add note", "Add a note"), ("note heading", "Note"),
    ("library documents", "3 Library documents kept."), ("library documents", "No Library documents from this page."),
    ("tier", "T&ier"), ("tier", "Any tier"), ("reauthorize", "Reauthorize"), ("n of ceiling", "Preferences — 1 of 12"),
    ("kept in memory", "It is kept in memory only, not saved"),
    ("extension id", "Paired with Chromium (extension abcdef…)"),
    ("fact group", "Same fact group"), ("fact group", "The office moved to Lyon (canonical)"),
])
def test_each_check_finds_the_phrase_it_was_written_for(leftover, said):
    assert leftovers_in(said, leftover)
    assert not leftovers_in("Add memory… · 3 Library pages · Trust: you wrote it · Renew · 100 of 5,000 memories",
                            leftover)
    assert not leftovers_in("note", leftover)  # the kind's own name
