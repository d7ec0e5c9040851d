"""File ▸ Back up…, Restore… and Export…: pick a file, do the work off the GUI thread, say what happened.

A backup runs while the app keeps working (SQLite's online backup). Restore… verifies the chosen
copy (manifest, integrity, full-text index), asks, and then swaps it in at once while the app has
let go of the vault (``VaultSwap``); the current vault is kept beside it. A plain backup chosen
while the vault is encrypted is asked about first: keep the vault encrypted (the default) or
restore it as a plain file. When another program holds the vault, nothing changes and
the message says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from vodou_desktop.data import copies
from vodou_desktop.data.backup import (
    BackupReport,
    VaultCounts,
    backup_vault,
    default_backup_name,
    plain_over_encrypted,
    timestamp,
    verify_backup,
)
from vodou_desktop.data.backup import restore_vault as _restore_vault
from vodou_desktop.data.export import ExportScope, write_export_file, write_jsonl
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.errors import KnownError
from vodou_desktop.ui.actions import ActionRegistry
from vodou_desktop.ui.prompts import ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.vault_swap import VaultSwap
from vodou_desktop.vault import cipher
from vodou_desktop.vault.cipher import key_for
from vodou_desktop.words import plural

FILE_ACTIONS = {"backup": "Back up…", "restore": "Restore…", "export": "Export…"}


def ensure_file_actions(actions: ActionRegistry) -> None:
    """The File menu's Back up… and Restore… (kept if another part of the app registered them)."""
    for name, text in FILE_ACTIONS.items():
        if name not in actions.names():
            actions.add(name, text)


class BackupFlow(QObject):
    def __init__(self, services: Services, vault_path: Path, parent_widget: QWidget | None,
                 swap: VaultSwap) -> None:
        super().__init__(parent_widget)
        self._services, self._vault_path, self._widget = services, vault_path, parent_widget
        self._swap = swap
        self.file_dialog: QFileDialog | None = None
        self.confirm_box: QMessageBox | None = None

    def backup(self) -> None:
        folder = backup_folder(self._services.runtime.settings)
        start = str((folder if folder.is_dir() else Path.home()) / default_backup_name(self._vault_path))
        dialog = QFileDialog(self._widget, "Back up the vault", start)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(self._backup_to)
        self._open(dialog)

    def _backup_to(self, chosen: str) -> None:
        vault = self._vault_path
        self._services.messages.info(f"Backing up the vault to {chosen}…")
        def work() -> BackupReport:
            report = backup_vault(vault, Path(chosen))
            copies.record(report.path, "backup")  # so that encrypt and erase can name it if it is elsewhere
            return report

        self._services.ops.run(work, self._backed_up, owner=self)

    def _backed_up(self, report: BackupReport) -> None:
        lock = " (encrypted)" if report.encrypted else ""
        self._services.messages.info(f"Backed up to {report.path}{lock}, {report.size / 1_048_576:.1f} MB, "
                                     f"integrity checked: {report.counts.sentence()}")

    def export(self) -> None:
        start = str(Path.home() / f"vodou-export-{timestamp()}.jsonl")
        dialog = QFileDialog(self._widget, "Export every memory (JSON Lines, lossless)", start)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(self._export_to)
        self._open(dialog)

    def _export_to(self, chosen: str) -> None:
        vault, path = self._services.runtime.vault, Path(chosen)

        def work() -> dict[str, int]:  # the file dialog asked before overwriting
            return write_export_file(path, lambda out: write_jsonl(vault, ExportScope(), out), replace=True)

        self._services.ops.run(work, lambda counts: self._services.messages.info(
            f"Exported {plural(counts.get('memory', 0), 'memory')} and "
            f"{plural(counts.get('document', 0), 'Library page')} "
            f"to {path} (forgotten ones left out)"), owner=self)

    def restore(self) -> None:
        folder = backup_folder(self._services.runtime.settings)
        dialog = QFileDialog(self._widget, "Restore the vault from a backup", str(folder if folder.is_dir() else
                                                                                  Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self._check)
        self._open(dialog)

    def _check(self, chosen: str) -> None:
        path = Path(chosen)
        self._services.ops.run(lambda: verify_backup(path).counts, lambda counts: self._ask(path, counts),
                               owner=self)

    def _ask(self, path: Path, counts: VaultCounts) -> None:
        text = (f"{path.name} passed its checks (manifest, integrity, full-text index) and holds "
                f"{counts.sentence()}.\n\nIt will take the place of the current vault now, which is kept beside "
                "it (…before-restore-…). Vodou pauses while it does. Any other program using the vault (vodou "
                "serve, an MCP client) must be closed first.")
        if not plain_over_encrypted(path, self._vault_path):
            self.confirm_box = ask_to_confirm(self._widget, "Restore the vault", text, "Restore now",
                                              lambda: self.restore_now(path))
            return
        self.confirm_box = ask_encryption(
            self._widget, text + "\n\nThis backup is NOT encrypted, and your vault is. Keep the restored vault "
            "encrypted with its key (recommended), or restore it as a plain file anyone with the file can read?",
            lambda keep: self.restore_now(path, keep_encryption=keep))

    def restore_now(self, backup: Path, *, keep_encryption: bool = True) -> bool:
        vault = self._vault_path
        return self._swap.run("Restoring the vault",
                              lambda _progress: restore_sentence(backup, vault, keep_encryption=keep_encryption),
                              self._widget)

    def _open(self, dialog: QFileDialog) -> None:
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # window-modal everywhere, and testable
        self.file_dialog = dialog
        dialog.open()


def ask_encryption(parent: QWidget | None, text: str, on_choice: Callable[[bool], None]) -> QMessageBox:
    """Restore keeping encryption (the default button), restore as a plain file, or cancel."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Restore the vault", text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
                      | QMessageBox.StandardButton.Cancel, parent)
    box.button(QMessageBox.StandardButton.Yes).setText("Restore, keep it encrypted")
    box.button(QMessageBox.StandardButton.No).setText("Restore as a plain file")
    box.setDefaultButton(QMessageBox.StandardButton.Yes)

    def clicked(button: Any) -> None:
        choice = box.standardButton(button)
        if choice in (QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No):
            on_choice(choice == QMessageBox.StandardButton.Yes)

    box.buttonClicked.connect(clicked)
    box.open()
    return box


def restore_sentence(backup: Path, vault: Path, *, keep_encryption: bool = True) -> str:
    """While the app has let go of the vault: the restore, and one sentence on how it went."""
    key = key_for(vault) if keep_encryption and plain_over_encrypted(backup, vault) else None
    cipher.forget_keys()  # the copy may be under another key than the vault it replaces
    try:
        report = _restore_vault(backup, vault, encrypt_with=key)
    except KnownError as exc:
        raise KnownError(f"The vault was not restored: {exc}") from exc
    kept = f" The previous vault was kept as {report.previous}." if report.previous else ""
    lock = " It was encrypted with the vault's key, as the vault was." if key else ""
    more = f" {report.encryption_sentence()}" if report.encryption_sentence() else ""
    return f"Restored {vault} from {backup}: {report.counts.sentence()}.{lock}{kept}{more}"
