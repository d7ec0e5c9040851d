"""Capture that runs by itself, in the tray app (MCP-2): the watchers' states in the tray menu,
Pause, the first-run question about Claude Code sessions, and a slow check for folders that appear.

All watcher work (start, stop, flush) runs as ops, off the GUI thread; the states come back through
``changed``. Pause is the tray's one Pause: it stops capture as it stops page reading.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QMenu, QMessageBox

from vodou_desktop import config
from vodou_desktop.ingest.capture_watchers import (
    LABELS,
    CaptureWatchers,
    WatcherState,
    needs_first_run_question,
    with_capture,
)
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.services import Services

REFRESH_MS = 5000
QUESTION = ("Vodou can keep what you type to Claude Code (read from its session logs on this computer) as"
            " memories, marked as captured, so your AI tools remember your decisions.\n\nNothing is kept until you"
            " say yes; you can change this in Settings and Pause stops it at any time.\n\n"
            "Capture Claude Code sessions?")


class CaptureStatus(QObject):
    changed = Signal()

    def __init__(self, services: Services, actions: ActionRegistry, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.services = services
        runtime = services.runtime
        self.watchers = CaptureWatchers(runtime.vault, runtime.settings, embedder=runtime.embedder,
                                        on_change=self.changed.emit)
        self.registry = actions  # the actions live as long as their registry
        self.actions = {name: actions.add(f"capture.{name}", f"{label}: …", enabled=False)
                        for name, label in LABELS.items()}
        self.question: QMessageBox | None = None
        self._timer = QTimer(self, interval=REFRESH_MS)
        self._timer.timeout.connect(lambda: self._op(self.watchers.refresh))
        self.changed.connect(self._show_states)
        actions["pause"].toggled.connect(self.set_paused)

    def start(self, paused: bool, ask: bool = True) -> None:
        """Start the watchers; ``ask``: the first-run question when it was never answered (the welcome
        window, when it shows, asks it instead)."""
        self._op(lambda: self.watchers.start(paused=paused))
        self._timer.start()
        if ask and needs_first_run_question(self.services.runtime.settings):
            self.ask_first_run()

    def attach(self, menu: QMenu, after: str = "pause") -> None:
        """Show the states in ``menu`` right below the Pause action."""
        anchor = next((a for a in menu.actions() if a.objectName() == after), None)
        following = menu.actions()[menu.actions().index(anchor) + 1] if anchor in menu.actions()[:-1] else None
        for action in self.actions.values():
            menu.insertAction(following, action) if following is not None else menu.addAction(action)

    def set_paused(self, paused: bool) -> None:
        self._op(lambda: self.watchers.set_paused(paused))

    def reconfigure(self, settings: config.Settings) -> None:
        self._op(lambda: self.watchers.reconfigure(settings))

    def states(self) -> list[WatcherState]:
        return self.watchers.states()

    def stop(self) -> None:
        self._timer.stop()
        if self.question is not None:
            self.question.buttonClicked.disconnect()
            self.question.close()
        self.watchers.stop()

    def ask_first_run(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Capture Claude Code sessions?", QUESTION,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setWindowModality(Qt.WindowModality.NonModal)  # the tray stays usable while the question waits
        yes = QMessageBox.StandardButton.Yes
        box.buttonClicked.connect(lambda button: self.answer(box.standardButton(button) == yes))
        self.question = box
        box.show()

    def answer(self, yes: bool) -> None:
        """Store the first-run answer once (it is not asked again) and apply it."""
        self.question = None

        def save() -> config.Settings:  # merged into the file as it is now: other first-run answers stay
            return config.update(lambda now: with_capture(now, claude_code=yes))

        def saved(_value: config.Settings) -> None:  # only this answer: another may have landed meanwhile
            value = with_capture(self.services.runtime.settings, claude_code=yes)
            self.services.runtime.settings = value
            self.reconfigure(value)

        self.services.ops.run(save, saved)

    def _op(self, work) -> None:  # type: ignore[no-untyped-def]
        self.services.ops.run(work)

    def _show_states(self) -> None:
        for state in self.watchers.states():
            self.actions[state.name].setText(state.describe())
            self.actions[state.name].setToolTip(str(state.folder))
