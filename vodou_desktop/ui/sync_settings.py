"""Settings ▸ Sync (SYNC-5): choose the folder and this computer's name, start syncing (first computer)
or join, the devices seen with their last change, "Sync now", pause, "Remove…" for a lost computer, and
every file refused (in one line naming its computer and number) as a problem. Every vault read and sync run is an
op (off the GUI thread); the page shows what came back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop.cli.sync import setup_secret
from vodou_desktop.governance.ages import format_age
from vodou_desktop.sync.engine import SyncEngine, resolve_join_key
from vodou_desktop.ui.services import Services
from vodou_desktop.words import plural

EMPTY = ("Sync keeps this vault in step with your other computers through a folder your sync engine "
         "(Syncthing, Nextcloud, Dropbox, a USB stick) already keeps in step. Nothing goes to a server of ours. "
         "Choose the folder and a name for this computer, then start syncing here, or join a vault another "
         "computer already syncs there.")


class SyncSettingsPage(QWidget):
    """The Sync page: a widget of its own, registered by Settings in one line."""

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.engine = SyncEngine(services.runtime.vault)
        self.key_box: QMessageBox | None = None
        self.remove_box: QMessageBox | None = None
        self.status: dict[str, Any] = {}
        self.intro = QLabel(EMPTY, wordWrap=True)
        self.folder = QLineEdit(placeholderText="a folder your sync engine keeps in step")
        self.folder.setAccessibleName("Sync folder")
        self.choose = QPushButton("&Choose…")
        self.name = QLineEdit(os.uname().nodename if hasattr(os, "uname") else "")
        self.name.setAccessibleName("This computer's name")
        self.start_button = QPushButton("&Start syncing (first computer)")
        self.join_button = QPushButton("&Join…")
        self.summary = QLabel(wordWrap=True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.devices = QListWidget()
        self.devices.setAccessibleName("Devices seen")
        self.problems = QLabel(wordWrap=True)
        self.remove_button = QPushButton("&Remove…")
        self.remove_button.setToolTip("A lost or stolen computer: every computer ignores its files from now on")
        self.remove_button.setEnabled(False)
        self.sync_now = QPushButton("Sync &now")
        self.pause = QCheckBox("&Pause sync")
        self._layout()
        self.choose.clicked.connect(self._choose)
        self.start_button.clicked.connect(self.start_syncing)
        self.join_button.clicked.connect(self._ask_join)
        self.sync_now.clicked.connect(self.run_now)
        self.remove_button.clicked.connect(self._ask_remove)
        self.devices.currentItemChanged.connect(lambda *_: self.remove_button.setEnabled(self._chosen() is not None))
        self.pause.toggled.connect(self.set_paused)
        self.refresh()

    def _layout(self) -> None:
        self.setup_part = QWidget()
        form = QFormLayout(self.setup_part)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(self.choose)
        folder_label = QLabel("Sync &folder")  # a row of two widgets has no buddy of its own: name the field
        folder_label.setBuddy(self.folder)
        form.addRow(folder_label, row)
        form.addRow("This computer's &name", self.name)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.join_button)
        buttons.addStretch(1)
        form.addRow("", buttons)
        self.synced_part = QWidget()
        synced = QVBoxLayout(self.synced_part)
        synced.setContentsMargins(0, 0, 0, 0)
        synced.addWidget(self.summary)
        synced.addWidget(QLabel("Devices seen:"))
        synced.addWidget(self.devices)
        actions = QHBoxLayout()
        actions.addWidget(self.sync_now)
        actions.addWidget(self.remove_button)
        actions.addWidget(self.pause)
        actions.addStretch(1)
        synced.addLayout(actions)
        synced.addWidget(self.problems)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Sync between your computers</b>"))
        layout.addWidget(self.intro)
        layout.addWidget(self.setup_part)
        layout.addWidget(self.synced_part)
        self.setup_part.hide()  # until the first status has been read
        self.synced_part.hide()

    # -- reading -------------------------------------------------------------------------------------
    def refresh(self) -> None:
        self.services.ops.run(self.engine.status, self._show, owner=self)

    def _show(self, status: dict[str, Any]) -> None:
        self.status = status
        set_up = bool(status.get("set_up"))
        self.intro.setVisible(not set_up)
        self.setup_part.setVisible(not set_up)
        self.synced_part.setVisible(set_up)
        if not set_up:
            return
        last = format_age(status["last_run"]) if status["last_run"] else "never"
        self.summary.setText(f"This computer is “{status['name']}”, syncing through {status['folder']}. "
                             f"Last sync: {last}. Changes here not sent yet: {status['pending_changes']}.")
        self.devices.clear()
        if not status["devices"]:
            self.devices.addItem("No other computer has joined yet: run “Join…” (or `vodou sync join`) there.")
        for d in status["devices"]:
            state = "removed: its files are ignored" if d["removed"] else "left" if d["left"] else \
                f"{plural(d['pending_files'], 'file')} waiting"
            when = format_age(d["last_change_at"]) if d["last_change_at"] else "not known yet"
            item = QListWidgetItem(f"{d['name'] or d['id']} — last change {when} (change {d['last_applied']} "
                                   f"applied), {state}")
            item.setData(Qt.ItemDataRole.UserRole, None if d["removed"] else d["id"])
            self.devices.addItem(item)
        self.remove_button.setEnabled(False)
        problems = list(status["problems"])
        if status.get("waiting_for_newer_version"):
            problems.append(f"{plural(status['waiting_for_newer_version'], 'change')} from a newer Vodou wait here, "
                            "kept: update Vodou on this computer to apply them.")
        if status["versioning"]:
            problems.append("Turn off file versioning for this folder in your sync engine: erased memories "
                            "would stay in its old copies.")
        self.problems.setText("\n".join(f"Problem: {p}" for p in problems))
        self.pause.blockSignals(True)
        self.pause.setChecked(bool(status["paused"]))
        self.pause.blockSignals(False)

    # -- actions -------------------------------------------------------------------------------------
    def _choose(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Choose the sync folder", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def start_syncing(self) -> None:
        """First computer: set up, first run, then show the join key once."""
        folder, name = Path(self.folder.text().strip()).expanduser(), self.name.text()
        vault = self.services.runtime.vault

        def work() -> str:
            secret, shown = setup_secret(vault.path)
            self.engine.setup(folder, name, secret, joining=False)
            self.engine.run(force_snapshot=True)
            return shown

        self.services.ops.run(work, self._started, owner=self)

    def _started(self, shown: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "Join key",
                          "This is the join key, shown once. On each other computer choose “Join…” (or run "
                          f"`vodou sync join FOLDER`) with it. Keep it safe: with it and the folder, anyone reads "
                          f"your memories.\n\n{shown}", QMessageBox.StandardButton.Ok, self)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setWindowModality(Qt.WindowModality.NonModal)
        self.key_box = box
        box.show()
        self._after_change()

    def _ask_join(self) -> None:
        typed, ok = QInputDialog.getText(self, "Join a synced vault", "Join key (or the vault's recovery key):",
                                         QLineEdit.EchoMode.Password)
        if ok and typed.strip():
            self.join(typed)

    def join(self, typed: str) -> None:
        folder, name = Path(self.folder.text().strip()).expanduser(), self.name.text()

        def work() -> None:
            self.engine.setup(folder, name, resolve_join_key(typed), joining=True)
            self.engine.run()

        self.services.ops.run(work, lambda _none: self._after_change(), owner=self)

    def _chosen(self) -> str | None:
        item = self.devices.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return value if isinstance(value, str) else None

    def _ask_remove(self) -> None:
        device = self._chosen()
        if device is None:
            return
        name = next((d["name"] or d["id"] for d in self.status.get("devices", []) if d["id"] == device), device)
        box = QMessageBox(QMessageBox.Icon.Warning, "Remove a computer",
                          f"Remove “{name}” from the synced vault? Every computer ignores its files from now on, "
                          "and its files are deleted from the folder. It still holds the key: to shut it out for "
                          "good, make a new key (leave on every computer, start syncing into a new folder, join "
                          "again).", QMessageBox.StandardButton.Cancel, self)
        remove = box.addButton("Remove", QMessageBox.ButtonRole.DestructiveRole)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(lambda button: self.remove(device) if button is remove else None)
        self.remove_box = box
        box.show()

    def remove(self, device: str) -> None:
        """Remove a computer (off the GUI thread); the result is a line above the problems."""
        def shown(done: dict[str, Any]) -> None:
            self.summary.setText(self.summary.text() + f"\nRemoved “{done['name'] or done['device']}”: its files "
                                 "are ignored from now on. It still holds the key (see Remove… for how to change it).")
            self.refresh()

        self.services.ops.run(lambda: self.engine.remove(device), shown, owner=self)

    def run_now(self) -> None:
        self.services.ops.run(self.engine.run, lambda _report: self.refresh(), owner=self)

    def set_paused(self, paused: bool) -> None:
        self.services.ops.run(lambda: self.engine.set_paused(paused), lambda _none: self.refresh(), owner=self)

    def _after_change(self) -> None:
        status = self.services.extras.get("sync")
        if status is not None:
            status.restart()  # type: ignore[attr-defined]
        self.refresh()
