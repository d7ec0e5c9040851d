"""File ▸ Back up…, Restore… and Export…: pick a file, do the work off the GUI thread, say what happened.

A backup runs while the app keeps working (SQLite's online backup). Restore… checks the chosen
copy, asks, and then swaps it in at once while the app has let go of the vault (``VaultSwap``);
the current vault is kept beside it. When another program holds the vault, nothing changes and
the message says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from vodou_desktop.data.backup import (
    BackupReport,
    VaultCounts,
    backup_vault,
    check_copy,
    default_backup_name,
    timestamp,
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
        self._services.ops.run(lambda: backup_vault(vault, Path(chosen)), self._backed_up, owner=self)

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
            f"Exported {counts.get('memory', 0)} memories and {counts.get('document', 0)} library documents "
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
        self._services.ops.run(lambda: check_copy(path, key_for(path)), lambda counts: self._ask(path, counts),
                               owner=self)

    def _ask(self, path: Path, counts: VaultCounts) -> None:
        self.confirm_box = ask_to_confirm(
            self._widget, "Restore the vault",
            f"{path.name} passed its integrity check and holds {counts.sentence()}.\n\nIt will take the place of "
            "the current vault now, which is kept beside it (…before-restore-…). Vodou pauses while it does. "
            "Any other program using the vault (vodou serve, an MCP client) must be closed first.",
            "Restore now", lambda: self.restore_now(path))

    def restore_now(self, backup: Path) -> bool:
        vault = self._vault_path
        return self._swap.run("Restoring the vault", lambda _progress: restore_sentence(backup, vault),
                              self._widget)

    def _open(self, dialog: QFileDialog) -> None:
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # window-modal everywhere, and testable
        self.file_dialog = dialog
        dialog.open()


def restore_sentence(backup: Path, vault: Path) -> str:
    """While the app has let go of the vault: the restore, and one sentence on how it went."""
    cipher.forget_keys()  # the copy may be under another key than the vault it replaces
    try:
        report = _restore_vault(backup, vault)
    except KnownError as exc:
        raise KnownError(f"The vault was not restored: {exc}") from exc
    kept = f" The previous vault was kept as {report.previous}." if report.previous else ""
    return f"Restored {vault} from {backup}: {report.counts.sentence()}.{kept}"
