"""Every tray/panel/browser command is registered once here and reused by every menu (Picard).

The tray menu, the embedded panel and the memory browser's menus all hold the same ``QAction``
objects, so enabling, checking or relabelling one updates it everywhere.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup, QKeySequence

MODES = ("off", "suggest", "collect")
MODE_LABELS = {"off": "Off — never read this site", "suggest": "Suggest — show memories, save nothing",
               "collect": "Collect — show and save"}
NOT_YET = "not available yet"
# File-menu commands another part of the app provides; disabled with NOT_YET until a handler is
# connected with ``on`` (the composition root wires them when that code is present).
PROVIDED_ELSEWHERE = ("backup", "restore", "export", "welcome")
SHORTCUTS = {"add_memory": QKeySequence.StandardKey.New, "import": "Ctrl+I", "quit": QKeySequence.StandardKey.Quit,
             "settings": QKeySequence.StandardKey.Preferences, "open_browser": "Ctrl+M", "shortcuts": "F1"}


class ActionRegistry(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._actions: dict[str, QAction] = {}
        self.mode_group = QActionGroup(self)
        self.mode_group.setExclusive(True)
        self.add("page", "No page from the browser yet", enabled=False)
        for mode in MODES:
            action = self.add(f"mode.{mode}", MODE_LABELS[mode], checkable=True, enabled=False)
            action.setData(mode)
            action.setIconText(mode.capitalize())  # what the panel's buttons show
            self.mode_group.addAction(action)
        self.add("pause", "Pause collection", checkable=True)
        self.add("open_browser", "Open memory browser")
        self.add("forget_site", "Forget site…")
        self.add("pair", "Pair browser extension…")
        self.add("settings", "Settings…")
        self.add("backfill", "Embed memories now…")
        self.add("dedupe", "Find near-duplicates")
        self.add("quit", "Quit Vodou")
        self.add("add_memory", "Add memory…")
        self.add("quick_search", "Search…")  # quick access: the global shortcut, when it is held, is its key
        self.add("import", "Import…")
        self.add("backup", "Back up…")
        self.add("restore", "Restore…")
        self.add("export", "Export…")
        self.add("shortcuts", "Keyboard shortcuts")
        self.add("about", "About Vodou")
        self.add("welcome", "Welcome and setup…")  # the first run's window, again
        for name in PROVIDED_ELSEWHERE:
            self[name].setEnabled(False)
            self[name].setToolTip(NOT_YET)
            self[name].setStatusTip(NOT_YET)
        for name, keys in SHORTCUTS.items():
            self[name].setShortcut(QKeySequence(keys))

    def add(self, name: str, text: str, *, checkable: bool = False, enabled: bool = True) -> QAction:
        if name in self._actions:
            raise ValueError(f"action {name!r} is already registered")
        action = QAction(text, self, objectName=name, checkable=checkable, enabled=enabled)
        action.setIconText(text)  # buttons keep the "…" that says a dialog follows (Qt drops it otherwise)
        self._actions[name] = action
        return action

    def __getitem__(self, name: str) -> QAction:
        return self._actions[name]

    def names(self) -> list[str]:
        return list(self._actions)

    def all_actions(self) -> list[QAction]:
        return list(self._actions.values())

    def on(self, name: str, slot: Callable[..., object]) -> None:
        """Connect the command's handler (``triggered``; ``toggled`` for checkable ones)."""
        action = self._actions[name]
        if name in PROVIDED_ELSEWHERE:  # its code is here after all: usable
            action.setEnabled(True)
            action.setToolTip(action.text().rstrip("…"))
            action.setStatusTip("")
        (action.toggled if action.isCheckable() and not name.startswith("mode.") else action.triggered).connect(slot)
