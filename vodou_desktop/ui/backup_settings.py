"""The Settings section for backups and encryption at rest (its own widget; the dialog holds it).

Rolling daily backups: on/off, how many to keep, which folder. Encryption: whether the vault is
encrypted and where its key is kept. Encrypting or decrypting needs the vault closed by every
program, so it is done from the command line with the app quit, and this section says so.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QLineEdit, QSpinBox, QWidget

from vodou_desktop import config
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.ui.ops import Ops
from vodou_desktop.vault import cipher
from vodou_desktop.vault.keystore import VaultKeyStore

ENCRYPT_HINT = "To encrypt it, quit Vodou and run `vodou encrypt` (a verified backup is made first)."
DECRYPT_HINT = "To turn it back into a plain file, quit Vodou and run `vodou decrypt`."


class BackupSettings(QWidget):
    def __init__(self, settings: config.Settings, vault_path: Path, ops: Ops, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.enabled = QCheckBox("Keep a backup of the vault every day", checked=settings.backups_enabled)
        self.keep = QSpinBox(minimum=1, maximum=365, value=settings.backups_keep, suffix=" backups")
        self.folder = QLineEdit(settings.backups_folder, placeholderText=str(backup_folder(settings)))
        self.encryption = QLabel(wordWrap=True)
        self.enabled.toggled.connect(self.keep.setEnabled)
        self.enabled.toggled.connect(self.folder.setEnabled)
        self.keep.setEnabled(settings.backups_enabled)
        self.folder.setEnabled(settings.backups_enabled)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Backups", self.enabled)
        form.addRow("Keep", self.keep)
        form.addRow("Backup folder", self.folder)
        form.addRow("Encryption", self.encryption)
        ops.run(lambda: encryption_sentence(vault_path), self.encryption.setText, owner=self)

    def apply(self, settings: config.Settings) -> config.Settings:
        """``settings`` with this section's values (validated by the caller's ``validate``)."""
        return dataclasses.replace(settings, backups_enabled=self.enabled.isChecked(), backups_keep=self.keep.value(),
                                   backups_folder=self.folder.text().strip(), extra=dict(settings.extra))


def encryption_sentence(vault_path: Path) -> str:
    if not cipher.is_encrypted(vault_path):
        return f"The vault is a plain SQLite file (not encrypted). {ENCRYPT_HINT}"
    if cipher.is_generated_key(cipher.key_for(vault_path) or ""):
        where = VaultKeyStore().storage
    else:
        where = f"your passphrase ({cipher.PASSPHRASE_ENV}), which Vodou does not store"
    return (f"The vault is encrypted (ChaCha20-Poly1305); its key is kept in {where}. Its backups are "
            f"encrypted with the same key. {DECRYPT_HINT}")
