"""Encrypting the vault from the app (DATA-3): at first run and from Settings.

Nothing is encrypted before the person has seen the recovery key, kept it (copied or saved to a
file) and said so: ``RecoveryKeyDialog`` enables Encrypt only then. The conversion itself is
``data.encryption`` (a verified backup first, the old vault intact if anything fails), run by
``VaultSwap`` while the app has let go of its vault, on a worker thread with progress.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from vodou_desktop import config
from vodou_desktop.data.backup import Progress
from vodou_desktop.data.encryption import decrypt_vault, encrypt_vault
from vodou_desktop.data.recovery import from_recovery, key_to_show, save_recovery_file, to_recovery
from vodou_desktop.ui.prompts import ask_to_confirm
from vodou_desktop.ui.services import Services
from vodou_desktop.ui.style import help_label
from vodou_desktop.vault import cipher
from vodou_desktop.vault.keystore import VaultKeyStore
from vodou_desktop.words import plural

OFFERED_KEY = "encryption.offered"  # settings.extra: the first-run offer was made (asked once)
EXPLAIN = ("This is your vault's recovery key. Vodou keeps the key itself in {place}, so you never type it; but "
           "if that copy is ever lost, or to open your vault or a backup on another computer (vodou key restore), "
           "only this recovery key opens them. Nobody, Vodou included, can recover an encrypted vault without it.")
KEPT = "I have saved or copied my recovery key and will keep it somewhere safe"
OFFER = ("Vodou can encrypt your memory vault on this computer, so that a copy of the file (a lost laptop, a "
         "synced folder) cannot be read without its key. The key is kept in {place}; first you will see a "
         "recovery key to save.\n\nEncrypt the vault now? You can also do it later in Settings.")


@dataclass(frozen=True)
class KeyPlace:
    """Where the vault key really goes here: the keyring, or a file when this computer has none."""

    keyring: bool
    where: str  # the keyring backend's name, or the folder of the key file

    def words(self) -> str:
        if self.keyring:
            return "this computer's keyring"
        return (f"a file in {self.where} (this computer has no keyring, so anyone who can read your files can "
                "read the key)")


def key_place(store: VaultKeyStore | None = None) -> KeyPlace:
    """Asks the keyring which backend it has (it may talk to D-Bus): call it off the GUI thread."""
    store = store or VaultKeyStore()
    return KeyPlace(False, str(store.folder)) if store.uses_file else KeyPlace(True, store.backend_name)


def encrypt_sentence(vault: Path, key: str, progress: Progress, settings: config.Settings) -> str:
    report = encrypt_vault(vault, key, progress, settings)
    more = f" {plural(report.backups_converted, 'earlier backup')} encrypted too." if report.backups_converted else ""
    if report.not_reached_sentence():
        more += f" {report.not_reached_sentence()[0].upper()}{report.not_reached_sentence()[1:]}."
    first = (f"A verified copy was made first: {report.backup}." if report.backup else
             "It was already encrypted: what an interrupted encryption left undone was finished.")
    return f"The vault is encrypted: {report.counts.sentence()}. {first}{more}"


def decrypt_sentence(vault: Path, progress: Progress, settings: config.Settings) -> str:
    report = decrypt_vault(vault, progress, settings)
    return (f"The vault is a plain SQLite file again: {report.counts.sentence()}. A verified (encrypted) copy "
            f"was made first: {report.backup}.")


class RecoveryKeyDialog(QDialog):
    """The recovery key, Copy and Save…, and a box to tick once it is kept; ``confirmed`` on Encrypt."""

    confirmed = Signal()

    def __init__(self, recovery: str, services: Services, *, confirm_text: str | None = "Encrypt",
                 place: KeyPlace | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Your recovery key")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self._services, self.recovery = services, recovery
        self.explain = QLabel(EXPLAIN.format(place=place.words() if place else "a safe place on this computer"),
                              wordWrap=True)
        groups = recovery.split("-")
        half = (len(groups) + 1) // 2
        self.key_label = QLabel(" ".join(groups[:half]) + "\n" + " ".join(groups[half:]))  # two rows of seven
        self.key_label.setAccessibleName("Recovery key")
        self.key_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.key_label.setFont(font)
        self.copy_button = QPushButton("&Copy")
        self.save_button = QPushButton("&Save to a file…")
        self.status = help_label()
        self.kept = QCheckBox(KEPT, enabled=False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.go: QPushButton | None = None
        if confirm_text:
            self.go = self.buttons.addButton(confirm_text, QDialogButtonBox.ButtonRole.AcceptRole)
            self.go.setEnabled(False)
            self.kept.toggled.connect(self.go.setEnabled)
        else:
            self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
        self.file_dialog: QFileDialog | None = None
        row = QHBoxLayout()
        row.addWidget(self.copy_button)
        row.addWidget(self.save_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        for widget in (self.explain, self.key_label):
            layout.addWidget(widget)
        layout.addLayout(row)
        layout.addWidget(self.status)
        if confirm_text:
            layout.addWidget(self.kept)
        layout.addWidget(self.buttons)
        self.copy_button.clicked.connect(self.copy)
        self.save_button.clicked.connect(self.save)
        self.buttons.accepted.connect(self._confirm)
        self.buttons.rejected.connect(self.reject)
        self.setMinimumWidth(520)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.recovery)
        self._kept_somewhere("Copied to the clipboard: paste it into your password manager now.")

    def save(self) -> None:
        dialog = QFileDialog(self, "Save the recovery key", str(Path.home() / "vodou-recovery-key.txt"))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite)  # never overwritten: refused with a reason
        dialog.fileSelected.connect(self.save_to)
        self.file_dialog = dialog
        dialog.open()

    def save_to(self, chosen: str) -> None:
        key = from_recovery(self.recovery)
        self._services.ops.run(lambda: save_recovery_file(key, Path(chosen)),
                               lambda path: self._kept_somewhere(f"Saved to {path} (readable by you only). "
                                                                 "Keep a copy away from this computer too."),
                               on_failure=lambda exc: self.status.setText(f"Not saved: {exc}"), owner=self)

    def _kept_somewhere(self, said: str) -> None:
        self.status.setText(said)
        self.kept.setEnabled(True)

    def _confirm(self) -> None:
        if self.go is None or not self.kept.isChecked():
            return
        self.accept()
        self.confirmed.emit()


class EncryptionFlow(QObject):
    """Encrypt this vault… / Remove encryption… / Show the recovery key…, and the first-run offer."""

    done = Signal(bool)  # after a conversion: it worked

    def __init__(self, services: Services, vault_path: Path, parent_widget: QWidget | None = None) -> None:
        super().__init__(parent_widget)
        self._services, self._vault_path, self._widget = services, vault_path, parent_widget
        self.key_dialog: RecoveryKeyDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.offer_box: QMessageBox | None = None

    @property
    def swap(self) -> Any:
        return self._services.extras.get("vault_swap")

    def encrypt(self) -> None:
        """Show the recovery key (made now if there is none yet); encrypt once the person confirms."""
        vault = self._vault_path
        self._services.ops.run(lambda: _key_and_recovery(vault), self._show_key, owner=self)

    def show_recovery_key(self) -> None:
        vault = self._vault_path
        self._services.ops.run(lambda: _key_and_recovery(vault),
                               lambda got: self._open_key_dialog(got[1], None, got[2]), owner=self)

    def _show_key(self, pair: tuple[str, str]) -> None:
        key, recovery, place = pair
        dialog = self._open_key_dialog(recovery, "Encrypt", place)
        dialog.confirmed.connect(lambda: self._run_encrypt(key))

    def _open_key_dialog(self, recovery: str, confirm_text: str | None, place: KeyPlace) -> RecoveryKeyDialog:
        dialog = RecoveryKeyDialog(recovery, self._services, confirm_text=confirm_text, place=place,
                                   parent=self._widget)
        self.key_dialog = dialog
        dialog.open()
        return dialog

    def _run_encrypt(self, key: str) -> None:
        vault, settings = self._vault_path, self._services.runtime.settings
        self._start("Encrypting the vault", lambda progress: encrypt_sentence(vault, key, progress, settings))

    def decrypt(self) -> None:
        vault, settings = self._vault_path, self._services.runtime.settings
        self.confirm_box = ask_to_confirm(
            self._widget, "Remove encryption",
            "The vault will be written back as a plain SQLite file that anyone with a copy of it can read. "
            "A verified, still encrypted copy is made first. Vodou pauses while it does.",
            "Remove encryption",
            lambda: self._start("Removing the vault's encryption",
                                lambda progress: decrypt_sentence(vault, progress, settings)))

    def _start(self, title: str, work: Any) -> None:
        swap = self.swap
        if swap is None:
            self._services.messages.error("Quit Vodou and run `vodou encrypt` or `vodou decrypt` instead.")
            return
        if swap.run(title, work, self._widget):
            swap.ended.connect(self._ended)

    def _ended(self, ok: bool, _sentence: str) -> None:
        self.swap.ended.disconnect(self._ended)
        self.done.emit(ok)

    # -- first run ----------------------------------------------------------------------
    def offer_at_first_run(self) -> bool:
        """Once per installation, for a plain vault: offer encryption (nothing happens before yes)."""
        settings = self._services.runtime.settings
        if settings.extra.get(OFFERED_KEY) or cipher.is_encrypted(self._vault_path):
            return False
        box = QMessageBox(QMessageBox.Icon.Question, "Encrypt your vault?",
                          OFFER.format(place="this computer's keyring, or a private file where it has none"),
                          QMessageBox.StandardButton.NoButton, self._widget)
        yes = box.addButton("Encrypt…", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setWindowModality(Qt.WindowModality.NonModal)  # the tray stays usable while it waits
        box.buttonClicked.connect(lambda button: self._offer_answered(button is yes))
        self.offer_box = box
        box.show()
        return True

    def _offer_answered(self, yes: bool) -> None:
        self.offer_box = None

        def mark(settings: config.Settings) -> config.Settings:
            return dataclasses.replace(settings, extra={**settings.extra, OFFERED_KEY: True})

        def saved(_value: config.Settings) -> None:  # only this answer: another may have landed meanwhile
            self._services.runtime.settings = mark(self._services.runtime.settings)

        self._services.ops.run(lambda: config.update(mark), saved)
        if yes:
            self.encrypt()


def _key_and_recovery(vault: Path) -> tuple[str, str, KeyPlace]:
    store = VaultKeyStore()
    key = key_to_show(vault, store)
    return key, to_recovery(key), key_place(store)
