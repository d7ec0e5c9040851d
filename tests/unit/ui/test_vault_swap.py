"""DATA-1/3 in the running app: Restore… swaps now, Encrypt this vault… (after the recovery key is
kept) and Remove encryption… convert while the app lets go of its vault, and reopen; another
program holding the vault, or a failure midway, changes nothing and is said in one sentence."""

from __future__ import annotations

import dataclasses
import errno
import subprocess
import sys
import threading
from pathlib import Path

import apsw
import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from tests.support import total_hits
from tests.unit.data.conftest import no_real_keyring  # noqa: F401  (autouse: the key file, never a real keyring)
from tests.unit.ui.test_desktop import EXT, desktop, get_json  # noqa: F401  (the composed-app fixture)
from vodou_desktop import config
from vodou_desktop.data import encryption
from vodou_desktop.data.backup import backup_vault
from vodou_desktop.data.recovery import from_recovery
from vodou_desktop.ingest.capture_watchers import enabled
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.ui import encryption_flow
from vodou_desktop.ui.encryption_flow import OFFERED_KEY
from vodou_desktop.ui.settings_dialog import SettingsDialog
from vodou_desktop.vault import cipher
from vodou_desktop.vault.keystore import VaultKeyStore

HOLDER = ("import sys\nfrom vodou_desktop.vault import Vault\nv = Vault.open(sys.argv[1])\n"
          "v.read(lambda c: c.execute('SELECT count(*) FROM chunks').fetchall())\nprint('ready', flush=True)\n"
          "sys.stdin.readline()\nv.close()\n")
WAIT_MS = 30_000


@pytest.fixture
def holder(vault_path: Path):  # type: ignore[no-untyped-def]
    """Another program with the vault open (as `vodou serve` or an MCP server would have it)."""
    procs: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(vault_path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    yield start
    for proc in procs:
        proc.communicate("\n", timeout=30)


def found(desktop, word: str) -> list[str]:  # noqa: F811
    return [r.fact.text for r in desktop.runtime.search.search(word)]


def ended(qtbot, desktop, before: object = None) -> tuple[bool, str]:  # noqa: F811
    swap = desktop.vault_swap
    qtbot.waitUntil(lambda: swap.last is not None and swap.last is not before and not swap.busy, timeout=WAIT_MS)
    assert swap.last is not None
    return swap.last


def still_works(desktop, word: str) -> None:  # noqa: F811
    """After the swap: the app reads, writes, searches and serves the bridge on the reopened vault."""
    remember(desktop.runtime.vault, f"written after the swap {word}", Origin("cli"))
    assert f"written after the swap {word}" in found(desktop, word)
    token = desktop.bridge.tokens.pair(EXT)
    assert get_json(f"http://127.0.0.1:{desktop.bridge.port}/api/ping", token)["paired"] is True


def test_restore_from_the_file_menu_swaps_now_while_the_app_runs(qtbot, desktop, tmp_path):  # noqa: F811
    vault = desktop.runtime.vault
    remember(vault, "the otterkeep memory is in the backup", Origin("cli"))
    copy = tmp_path / "copy.sqlite"
    backup_vault(vault.path, copy)
    remember(vault, "the otterkeep memory written after the backup", Origin("cli"))
    assert len(found(desktop, "otterkeep")) == 2
    flow = desktop.commands.backups
    flow.restore()
    flow.file_dialog.selectFile(str(copy))
    flow.file_dialog.accept()
    qtbot.waitUntil(lambda: flow.confirm_box is not None and flow.confirm_box.isVisible())
    assert "now" in flow.confirm_box.text() and "quit" not in flow.confirm_box.text()
    flow.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    ok, text = ended(qtbot, desktop)
    assert ok, text
    assert "The previous vault was kept as" in text and not desktop._quit.is_set()
    assert found(desktop, "otterkeep") == ["the otterkeep memory is in the backup"]
    assert list(tmp_path.glob("vault.sqlite.before-restore-*"))
    still_works(desktop, "otterkeep")


def test_restore_is_refused_while_another_program_holds_the_vault(qtbot, desktop, tmp_path, holder):  # noqa: F811
    vault = desktop.runtime.vault
    remember(vault, "the badgerkeep memory is in the backup", Origin("cli"))
    copy = tmp_path / "copy.sqlite"
    backup_vault(vault.path, copy)
    remember(vault, "the badgerkeep memory written after the backup", Origin("cli"))
    holder()
    assert desktop.commands.backups.restore_now(copy)
    ok, text = ended(qtbot, desktop)
    assert not ok and "open in another program" in text and "nothing was changed" in text
    assert "Traceback" not in text and "bug" not in text
    assert len(found(desktop, "badgerkeep")) == 2 and not list(tmp_path.glob("vault.sqlite.before-restore-*"))
    still_works(desktop, "badgerkeep")


def test_encrypt_from_settings_only_after_the_recovery_key_is_kept_then_remove_it(
        qtbot, desktop, tmp_path, monkeypatch):  # noqa: F811
    vault = desktop.runtime.vault
    remember(vault, "the lynxcanary hides in the pines", Origin("cli"))
    desktop.runtime.settings = dataclasses.replace(config.Settings(), backups_folder=str(tmp_path / "copies"))
    threads: list[str] = []
    real_encrypt = encryption_flow.encrypt_vault

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return real_encrypt(*args, **kwargs)

    monkeypatch.setattr(encryption_flow, "encrypt_vault", recording)
    dialog = SettingsDialog(desktop.services, desktop.sites, desktop.bridge.tokens, vault_path=vault.path)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_section("Backups and encryption")
    section = dialog.backups
    qtbot.waitUntil(lambda: section.encrypt_button.isVisible())
    assert not section.decrypt_button.isVisible() and "plain SQLite file" in section.encryption.text()
    assert [b.text().replace("&", "") for b in (section.encrypt_button, section.recovery_button,
                                                section.decrypt_button)] == [
        "Encrypt this vault…", "Show recovery key…", "Remove encryption…"]
    section.encrypt_button.click()
    qtbot.waitUntil(lambda: section.flow.key_dialog is not None and section.flow.key_dialog.isVisible())
    keys = section.flow.key_dialog
    assert keys.go is not None and not keys.go.isEnabled() and not keys.kept.isEnabled()
    qtbot.mouseClick(keys.kept, Qt.MouseButton.LeftButton)  # cannot say "kept" before copying or saving it
    assert not keys.kept.isChecked()
    keys.go.click()
    assert not cipher.is_encrypted(vault.path)
    keys.copy_button.click()
    assert QGuiApplication.clipboard().text() == keys.recovery
    assert from_recovery(keys.recovery) == VaultKeyStore().get()
    assert not keys.go.isEnabled()
    qtbot.mouseClick(keys.kept, Qt.MouseButton.LeftButton)
    assert keys.kept.isChecked() and keys.go.isEnabled()
    assert not cipher.is_encrypted(vault.path)  # nothing before yes
    keys.go.click()
    ok, text = ended(qtbot, desktop)
    assert ok, text
    assert threads and threads[0] != threading.main_thread().name  # converted off the GUI thread
    assert cipher.is_encrypted(vault.path) and total_hits(vault.path, "lynxcanary") == 0
    assert list((tmp_path / "copies").glob("vault.sqlite.before-encrypt-*"))
    still_works(desktop, "lynxcanary")
    assert total_hits(vault.path, "lynxcanary") == 0  # the write after it is encrypted too (db, WAL)
    qtbot.waitUntil(lambda: section.decrypt_button.isVisible() and section.recovery_button.isVisible())
    assert not section.encrypt_button.isVisible()
    shown_before = keys.recovery
    section.recovery_button.click()  # Show recovery key…: the same key, to look at again; nothing to confirm
    qtbot.waitUntil(lambda: section.flow.key_dialog is not keys and section.flow.key_dialog.isVisible())
    assert section.flow.key_dialog.recovery == shown_before and section.flow.key_dialog.go is None
    section.flow.key_dialog.reject()

    before = desktop.vault_swap.last
    section.decrypt_button.click()
    qtbot.waitUntil(lambda: section.flow.confirm_box is not None and section.flow.confirm_box.isVisible())
    section.flow.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    ok, text = ended(qtbot, desktop, before)
    assert ok and "plain SQLite file again" in text, text
    assert not cipher.is_encrypted(vault.path)
    conn = apsw.Connection(str(vault.path), flags=apsw.SQLITE_OPEN_READONLY)  # no key: a plain file
    assert conn.execute("SELECT count(*) FROM chunks WHERE text LIKE '%lynxcanary%'").fetchone()[0] == 2
    conn.close()
    assert len(found(desktop, "lynxcanary")) == 2


def test_a_failure_midway_leaves_the_old_vault_intact_and_open(qtbot, desktop, tmp_path, monkeypatch):  # noqa: F811
    vault = desktop.runtime.vault
    remember(vault, "the stoatcanary crosses the snow", Origin("cli"))
    desktop.runtime.settings = dataclasses.replace(config.Settings(), backups_folder=str(tmp_path / "copies"))
    calls: list[Path] = []

    def disk_full(path: Path) -> None:  # the converted copy is written: the disk fills as it is synced
        calls.append(path)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(encryption, "fsync_file", disk_full)
    key = VaultKeyStore().get_or_create()
    desktop.encryption._run_encrypt(key)
    ok, text = ended(qtbot, desktop)
    assert calls and calls[0].name == "vault.sqlite.encrypting"
    assert not ok and "No space left on device" in text and "left as it was" in text and "bug" not in text
    assert not cipher.is_encrypted(vault.path) and total_hits(vault.path, "stoatcanary") > 0
    assert sorted(p.name for p in tmp_path.glob("vault.sqlite*") if not p.name.endswith(("-wal", "-shm"))) == [
        "vault.sqlite"]
    assert not list((tmp_path / "copies").glob("*"))
    conn = apsw.Connection(str(vault.path), flags=apsw.SQLITE_OPEN_READONLY)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    still_works(desktop, "stoatcanary")


def test_encrypt_is_refused_while_another_program_holds_the_vault(qtbot, desktop, tmp_path, holder):  # noqa: F811
    remember(desktop.runtime.vault, "the volecanary runs", Origin("cli"))
    desktop.runtime.settings = dataclasses.replace(config.Settings(), backups_folder=str(tmp_path / "copies"))
    holder()
    desktop.encryption._run_encrypt(VaultKeyStore().get_or_create())
    ok, text = ended(qtbot, desktop)
    assert not ok and "open in another program" in text and "nothing was changed" in text
    assert not cipher.is_encrypted(desktop.runtime.vault.path)
    still_works(desktop, "volecanary")


def test_first_run_offers_encryption_once_and_encrypts_nothing_before_yes(qtbot, desktop):  # noqa: F811
    flow = desktop.encryption
    qtbot.waitUntil(lambda: desktop.welcome is not None and desktop.welcome.facts is not None, timeout=5000)
    assert desktop.capture.question is None and flow.offer_box is None  # the welcome asks; no question box
    desktop.welcome.encrypt_button.click()  # Encrypt…: the recovery key comes first, saying where the key goes
    qtbot.waitUntil(lambda: flow.key_dialog is not None and flow.key_dialog.isVisible())
    assert "Vodou keeps the key itself in a file in" in flow.key_dialog.explain.text()  # no keyring here
    assert "keyring" not in flow.key_dialog.explain.text().replace("no keyring", "")
    flow.key_dialog.reject()
    desktop.welcome.close()
    qtbot.waitUntil(lambda: config.load().extra.get(OFFERED_KEY) is True and desktop.services.ops.pending == 0)
    assert enabled(config.load())["claude_code"] is False  # both first-run answers kept: neither lost the other
    assert not flow.offer_at_first_run()  # asked once
    assert not cipher.is_encrypted(desktop.runtime.vault.path)

    desktop.runtime.settings = dataclasses.replace(desktop.runtime.settings, extra={})
    assert flow.offer_at_first_run()
    flow.offer_box.buttons()[0].click()  # Encrypt…: the recovery key comes first
    qtbot.waitUntil(lambda: flow.key_dialog is not None and flow.key_dialog.isVisible())
    flow.key_dialog.reject()
    qtbot.wait(200)
    assert not cipher.is_encrypted(desktop.runtime.vault.path) and desktop.vault_swap.last is None


def test_closing_settings_while_it_encrypts_still_ends_cleanly(qtbot, desktop, tmp_path):  # noqa: F811
    remember(desktop.runtime.vault, "the martencanary climbs", Origin("cli"))
    desktop.runtime.settings = dataclasses.replace(config.Settings(), backups_folder=str(tmp_path / "copies"))
    dialog = SettingsDialog(desktop.services, desktop.sites, desktop.bridge.tokens,
                            vault_path=desktop.runtime.vault.path)
    dialog.show()
    dialog.show_section("Backups and encryption")
    qtbot.waitUntil(lambda: dialog.backups.encrypt_button.isVisible())
    dialog.backups.flow._run_encrypt(VaultKeyStore().get_or_create())
    dialog.close()
    dialog.deleteLater()  # the progress window goes with it
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    ok, text = ended(qtbot, desktop)
    assert ok, text
    assert cipher.is_encrypted(desktop.runtime.vault.path)
    still_works(desktop, "martencanary")
