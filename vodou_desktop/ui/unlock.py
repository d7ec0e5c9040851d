"""At start, an encrypted vault that no key here opens (keyring entry lost, vault brought from
another computer): ask for the recovery key instead of only saying that Vodou cannot start.

``restore_key`` checks the typed key against the vault with a read-only probe before it is kept in
the keyring, so a mistyped or foreign key is said in the dialog and changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from vodou_desktop.data.recovery import restore_key
from vodou_desktop.errors import KnownError, VaultUnavailable
from vodou_desktop.ui.style import problem_label
from vodou_desktop.vault import cipher

ASK = ("The vault {vault} is encrypted, and no key on this computer opens it (the keyring entry may have "
       "been lost, or the vault comes from another computer).\n\nType or paste its recovery key (the 14 "
       "groups of four you saved when it was encrypted) to put the key back and open it.")


def locked_out(vault: Path) -> bool:
    """The vault is encrypted and nothing here (keyring, key file, ``VODOU_PASSPHRASE``) opens it."""
    if not cipher.is_encrypted(vault):
        return False
    try:
        cipher.key_for(vault)
    except VaultUnavailable:
        return True
    return False


class UnlockDialog(QDialog):
    def __init__(self, vault: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open the encrypted vault")
        self.setMinimumWidth(520)
        self.vault = vault
        self.explain = QLabel(ASK.format(vault=vault), wordWrap=True)
        self.key = QLineEdit(placeholderText="XXXX-XXXX-XXXX-…")
        self.key.setAccessibleName("Recovery key")
        self.problem = problem_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_button = self.buttons.addButton("Open the vault", QDialogButtonBox.ButtonRole.AcceptRole)
        layout = QVBoxLayout(self)
        for widget in (self.explain, self.key, self.problem, self.buttons):
            layout.addWidget(widget)
        self.buttons.accepted.connect(self.try_key)
        self.buttons.rejected.connect(self.reject)

    def try_key(self) -> None:
        try:
            restore_key(self.key.text(), self.vault)
        except KnownError as exc:
            self.problem.setText(str(exc))
            return
        self.accept()
