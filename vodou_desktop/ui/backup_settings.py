"""The Settings section for backups and encryption at rest (its own widget; the dialog holds it).

Rolling daily backups: on/off, how many to keep, which folder. Encryption: whether the vault is
encrypted and where its key is kept, with Encrypt this vault… (after the recovery key is shown and
kept), Show recovery key… and Remove encryption… (``encryption_flow``). Where the app cannot let
go of its vault (no ``vault_swap`` service, as in a bare Settings window), the section names the
commands instead.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget

from vodou_desktop import config
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.ui.encryption_flow import EncryptionFlow
from vodou_desktop.ui.services import Services
from vodou_desktop.vault import cipher
from vodou_desktop.vault.keystore import VaultKeyStore

ENCRYPT_HINT = "To encrypt it, quit Vodou and run `vodou encrypt` (a verified backup is made first)."
DECRYPT_HINT = "To turn it back into a plain file, quit Vodou and run `vodou decrypt`."
IN_APP_ENCRYPT = "Encrypting makes a verified backup first and shows you a recovery key to keep."


class BackupSettings(QWidget):
    def __init__(self, settings: config.Settings, vault_path: Path, services: Services,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._services, self._vault_path = services, vault_path
        self.in_app = services.extras.get("vault_swap") is not None
        self.flow = EncryptionFlow(services, vault_path, self)
        self.flow.done.connect(lambda _ok: self.refresh_encryption())
        self.encrypt_button = QPushButton("Encrypt &this vault…", visible=False)
        self.recovery_button = QPushButton("Show recovery &key…", visible=False)
        self.decrypt_button = QPushButton("Re&move encryption…", visible=False)
        self.encrypt_button.clicked.connect(self.flow.encrypt)
        self.recovery_button.clicked.connect(self.flow.show_recovery_key)
        self.decrypt_button.clicked.connect(self.flow.decrypt)
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
        buttons = QHBoxLayout()
        for button in (self.encrypt_button, self.recovery_button, self.decrypt_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        form.addRow("", buttons)
        self.refresh_encryption()

    def refresh_encryption(self) -> None:
        vault, in_app = self._vault_path, self.in_app
        self._services.ops.run(lambda: encryption_state(vault, in_app), self._show_encryption, owner=self)

    def _show_encryption(self, state: tuple[bool, bool, str]) -> None:
        encrypted, generated, sentence = state
        self.encryption.setText(sentence)
        self.encrypt_button.setVisible(self.in_app and not encrypted)
        self.recovery_button.setVisible(encrypted and generated)
        self.decrypt_button.setVisible(self.in_app and encrypted)

    def apply(self, settings: config.Settings) -> config.Settings:
        """``settings`` with this section's values (validated by the caller's ``validate``)."""
        return dataclasses.replace(settings, backups_enabled=self.enabled.isChecked(), backups_keep=self.keep.value(),
                                   backups_folder=self.folder.text().strip(), extra=dict(settings.extra))


def encryption_state(vault_path: Path, in_app: bool = False) -> tuple[bool, bool, str]:
    """(encrypted, with a generated key, the sentence for Settings)."""
    if not cipher.is_encrypted(vault_path):
        hint = IN_APP_ENCRYPT if in_app else ENCRYPT_HINT
        return False, False, f"The vault is a plain SQLite file (not encrypted). {hint}"
    generated = cipher.is_generated_key(cipher.key_for(vault_path) or "")
    if generated:
        where = VaultKeyStore().storage
    else:
        where = f"your passphrase ({cipher.PASSPHRASE_ENV}), which Vodou does not store"
    tail = "" if in_app else f" {DECRYPT_HINT}"
    return True, generated, (f"The vault is encrypted (ChaCha20-Poly1305); its key is kept in {where}. Its backups "
                             f"are encrypted with the same key.{tail}")


def encryption_sentence(vault_path: Path) -> str:
    return encryption_state(vault_path)[2]
