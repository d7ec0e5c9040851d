"""At start, an encrypted vault whose key is gone from this computer opens with its recovery key typed
into the app; a mistyped key is said in the dialog and changes nothing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog

from tests.support import file_hashes
from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from vodou_desktop import config, paths
from vodou_desktop.data.encryption import encrypt_vault
from vodou_desktop.data.recovery import to_recovery
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui.unlock import UnlockDialog, locked_out
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, cipher
from vodou_desktop.vault import query as q
from vodou_desktop.vault.keystore import KEY_FILE, VaultKeyStore


def test_a_locked_out_vault_opens_with_the_recovery_key_typed_at_start(qtbot, vault_path: Path,
                                                                       tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "the ibexcanary climbs the cliff", Origin("cli"))
    key = VaultKeyStore().get_or_create()
    recovery = to_recovery(key)
    encrypt_vault(vault_path, key, settings=config.Settings(backups_folder=str(tmp_path / "copies")))
    assert not locked_out(vault_path)
    (paths.config_dir() / "keys" / KEY_FILE).unlink()  # the keyring entry is gone
    cipher.forget_keys()
    assert locked_out(vault_path)
    before = file_hashes(vault_path)

    dialog = UnlockDialog(vault_path)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.key.setText(recovery[:-1] + ("A" if recovery[-1] != "A" else "B"))
    dialog.open_button.click()
    assert "mistyped" in dialog.problem.text() and dialog.isVisible()
    assert VaultKeyStore().get() is None and file_hashes(vault_path) == before
    dialog.key.setText(recovery.lower().replace("-", " "))
    dialog.open_button.click()
    assert dialog.result() == QDialog.DialogCode.Accepted and VaultKeyStore().get() == key
    cipher.forget_keys()
    assert not locked_out(vault_path)
    with Vault.open(vault_path) as vault:
        facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert [f.text for f in facts] == ["the ibexcanary climbs the cliff"]
