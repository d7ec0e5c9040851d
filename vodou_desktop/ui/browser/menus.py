"""The memory browser's menu bar (File, Edit, View, Tools, Help), built from the shared action
registry and the Memories tab's memory actions, so every command has one QAction everywhere."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QLabel, QMainWindow, QMenu, QMessageBox, QVBoxLayout, QWidget

from vodou_desktop import APP_NAME, __version__
from vodou_desktop.ui.actions import ActionRegistry

FILE = ("add_memory", "import", "-", "backup", "restore", "export", "-", "pair", "settings", "-", "quit")
TOOLS = ("forget_site", "backfill", "dedupe")
HELP = ("welcome", "shortcuts", "about")
FIXED_KEYS = [("Enter (in the search box)", "Go to the results"), ("Up / Down", "Move through the results"),
              ("Ctrl+Enter", "Save in a text dialog"),
              ("Ctrl+Tab", "Next tab"), ("Shift+F10 or the Menu key", "The selected memory's actions"),
              ("Alt + underlined letter", "Open a menu or reach a labelled field")]


def _fill(menu: QMenu, actions: ActionRegistry, names: tuple[str, ...]) -> None:
    for name in names:
        if name == "-":
            menu.addSeparator()
        else:
            menu.addAction(actions[name])


def build_menu_bar(window: QMainWindow, actions: ActionRegistry, memory_actions: list[QAction],
                   view_actions: list[QAction]) -> dict[str, QMenu]:
    bar = window.menuBar()
    menus = {name: bar.addMenu(title) for name, title in
             (("file", "&File"), ("edit", "&Edit"), ("view", "&View"), ("tools", "&Tools"), ("help", "&Help"))}
    _fill(menus["file"], actions, FILE)
    undo = [a for a in memory_actions if a.objectName() == "fact.undo"]
    for action in undo:  # Undo first, as in every Edit menu, then what acts on the selection
        menus["edit"].addAction(action)
        menus["edit"].addSeparator()
    for action in memory_actions:
        if action not in undo:
            menus["edit"].addAction(action)
    for action in view_actions:
        menus["view"].addAction(action)
    _fill(menus["tools"], actions, TOOLS)
    _fill(menus["help"], actions, HELP)
    return menus


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    """Every action with a shortcut, then the keys that work everywhere in the window."""
    rows = [(a.shortcut().toString(QKeySequence.SequenceFormat.NativeText), a.text().replace("&", ""))
            for a in actions if not a.shortcut().isEmpty()]
    return sorted(set(rows)) + FIXED_KEYS


class ShortcutsDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        table = "".join(f"<tr><td><b>{keys}</b></td><td>{what}</td></tr>" for keys, what in rows)
        self.table = QLabel(f"<table cellspacing=6>{table}</table>")
        self.table.setAccessibleName("Keyboard shortcuts")
        QVBoxLayout(self).addWidget(self.table)


def show_about(parent: Any) -> None:
    QMessageBox.about(parent, f"About {APP_NAME}",
                      f"<b>{APP_NAME}</b> {__version__}<br>Your AI memory, kept in a local vault on this computer. "
                      "Nothing leaves it unless you send it.")
