"""DATA-1/3 in the app: File ▸ Back up… / Restore…, the Settings section, the rolling backups timer."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QMessageBox

from tests.support import total_hits
from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from tests.unit.ui.test_desktop import desktop  # noqa: F401  (the composed-app fixture)
from vodou_desktop import config
from vodou_desktop.data.backup import backup_vault
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.backup_dialogs import BackupFlow
from vodou_desktop.ui.backup_schedule import RollingBackups
from vodou_desktop.ui.encryption_flow import encrypt_sentence
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.ui.vault_swap import VaultSwap
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, cipher
from vodou_desktop.vault import query as q
from vodou_desktop.vault.keystore import VaultKeyStore


def test_back_up_then_restore_from_the_file_menu_flow(qtbot, services, vault, tmp_path):
    remember(vault, "kept in the backup", Origin("cli"))
    swap = VaultSwap(services)
    flow = BackupFlow(services, vault.path, None, swap)
    copy = tmp_path / "copy.sqlite"
    flow.backup()
    assert flow.file_dialog is not None and flow.file_dialog.isVisible()
    flow.file_dialog.selectFile(str(copy))
    flow.file_dialog.accept()
    qtbot.waitUntil(lambda: any(text.startswith("Backed up to") for _, text in services.messages.history))
    assert copy.exists() and "1 memory" in services.messages.history[-1][1]

    remember(vault, "written after the backup", Origin("cli"))
    flow.restore()
    flow.file_dialog.selectFile(str(copy))
    flow.file_dialog.accept()
    qtbot.waitUntil(lambda: flow.confirm_box is not None and flow.confirm_box.isVisible())
    assert "passed its checks (manifest, integrity, full-text index) and holds 1 memory" in flow.confirm_box.text()
    flow.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: swap.last is not None, timeout=30_000)
    ok, text = swap.last
    assert ok and "The previous vault was kept as" in text, text
    assert list(tmp_path.glob("vault.sqlite.before-restore-*"))
    facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert [f.text for f in facts] == ["kept in the backup"]  # the same Vault object, reopened on the copy


def test_the_file_menu_has_back_up_and_restore(qtbot, desktop):  # noqa: F811
    assert desktop.actions["backup"].text() == "Back up…" and desktop.actions["restore"].text() == "Restore…"


def test_settings_section_saves_backup_choices_and_tells_about_encryption(qtbot, services, vault, tmp_path):
    path = tmp_path / "settings.json"
    dialog = SettingsDialog(services, SiteModes(vault), None, vault_path=vault.path, config_path=path)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: "plain SQLite file" in dialog.backups.encryption.text())
    assert "vodou encrypt" in dialog.backups.encryption.text()
    dialog.backups.enabled.setChecked(False)
    assert not dialog.backups.keep.isEnabled()
    dialog.backups.enabled.setChecked(True)
    dialog.backups.keep.setValue(3)
    dialog.backups.folder.setText(str(tmp_path / "copies"))
    dialog.save()
    qtbot.waitUntil(lambda: dialog.saved is not None)
    saved = config.load(path)
    assert (saved.backups_enabled, saved.backups_keep, saved.backups_folder) == (True, 3, str(tmp_path / "copies"))


def test_rolling_backups_run_off_the_gui_thread_when_due(qtbot, services, vault, tmp_path):
    remember(vault, "rolled by the app", Origin("cli"))
    services.runtime.settings = dataclasses.replace(config.Settings(), backups_folder=str(tmp_path / "rolled"))
    rolling = RollingBackups(services)
    rolling.check()
    qtbot.waitUntil(lambda: rolling.last is not None)
    assert rolling.last.path.parent == tmp_path / "rolled" and rolling.last.counts.memories == 1
    rolling.last = None
    rolling.check()  # not due again today
    qtbot.wait(300)
    assert rolling.last is None and services.ops.pending == 0


def test_export_from_the_file_menu_flow(qtbot, services, vault, tmp_path):
    remember(vault, "exported from the app", Origin("cli"))
    flow = BackupFlow(services, vault.path, None, VaultSwap(services))
    target = tmp_path / "all.jsonl"
    flow.export()
    flow.file_dialog.selectFile(str(target))
    flow.file_dialog.accept()
    said = "Exported 1 memory and 0 Library pages to "
    qtbot.waitUntil(lambda: any(text.startswith(said) for _, text in services.messages.history))
    assert "exported from the app" in target.read_text() and target.stat().st_mode & 0o777 == 0o600


def test_restoring_a_plain_backup_over_an_encrypted_vault_asks_first_and_keeps_encryption(
        qtbot, services, vault, tmp_path):
    remember(vault, "the ospreycanary in the plain backup", Origin("cli"))
    copy = tmp_path / "plain.sqlite"
    backup_vault(vault.path, copy)
    swap = VaultSwap(services)
    settings = dataclasses.replace(services.runtime.settings, backups_folder=str(tmp_path / "b"))
    key = VaultKeyStore().get_or_create()
    assert swap.run("Encrypting", lambda progress: encrypt_sentence(vault.path, key, progress, settings))
    qtbot.waitUntil(lambda: swap.last is not None, timeout=30_000)
    assert swap.last[0] and cipher.is_encrypted(vault.path)
    swap.last = None

    flow = BackupFlow(services, vault.path, None, swap)
    flow.restore()
    flow.file_dialog.selectFile(str(copy))
    flow.file_dialog.accept()
    qtbot.waitUntil(lambda: flow.confirm_box is not None and flow.confirm_box.isVisible())
    box = flow.confirm_box
    assert "NOT encrypted" in box.text() and cipher.is_encrypted(vault.path)  # asked; nothing done yet
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Yes)
    assert box.button(QMessageBox.StandardButton.Yes).text() == "Restore, keep it encrypted"
    assert box.button(QMessageBox.StandardButton.No).text() == "Restore as a plain file"
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: swap.last is not None, timeout=30_000)
    ok, text = swap.last
    assert ok and "encrypted with the vault's key" in text, text
    assert cipher.is_encrypted(vault.path) and total_hits(vault.path, "ospreycanary") == 0
    facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert [f.text for f in facts] == ["the ospreycanary in the plain backup"]
