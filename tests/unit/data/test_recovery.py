"""The recovery key: a lost keyring entry (the key file here, as keyring has no backend in tests)
does not lose the vault or its backups; a mistyped key is one line and changes nothing."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.support import file_hashes, run_cli
from vodou_desktop import paths
from vodou_desktop.data.recovery import RECOVERY_ENV, from_recovery, to_recovery
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.keystore import KEY_FILE, VaultKeyStore, new_key

CANARY = "wombatcanary-recovered"


def _lose_the_key() -> None:
    """What a wiped keyring (or a deleted key file) does: no stored key, nothing remembered."""
    (paths.config_dir() / "keys" / KEY_FILE).unlink()
    cipher.forget_keys()
    assert VaultKeyStore().get() is None


def _encrypted_vault(vault_path: Path, tmp_path: Path) -> str:
    with Vault.open(vault_path) as vault:
        remember(vault, f"the {CANARY} sleeps under the porch", Origin(kind="cli"))
    saved = run_cli("--vault", str(vault_path), "key", "save", str(tmp_path / "recovery.txt"))
    assert saved.code == 0, saved.err
    encrypted = run_cli("--vault", str(vault_path), "encrypt")
    assert encrypted.code == 0, encrypted.err
    assert "vodou key save" in encrypted.out
    shown = run_cli("--vault", str(vault_path), "key", "show", "--json")
    assert shown.code == 0, shown.err
    return str(json.loads(shown.out)["recovery_key"])


def _one_line_error(result: object, *words: str) -> None:
    code, err = result.code, result.err  # type: ignore[attr-defined]
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def test_recovery_key_is_grouped_base32_with_a_checksum_and_forgives_case_spaces_and_look_alikes() -> None:
    key = new_key()
    shown = to_recovery(key)
    groups = shown.split("-")
    assert len(groups) == 14 and all(len(g) == 4 for g in groups)
    assert set(shown) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567-")
    assert from_recovery(shown) == key
    sloppy = "  " + " ".join(groups).lower().replace("o", "0").replace("i", "1").replace("b", "8") + "\n"
    assert from_recovery(sloppy) == key
    with pytest.raises(Exception, match="own passphrase"):
        to_recovery("correct horse battery staple")


def test_lost_keyring_entry_then_the_recovery_key_opens_the_vault_again(vault_path: Path, tmp_path: Path) -> None:
    shown = _encrypted_vault(vault_path, tmp_path)
    saved = tmp_path / "recovery.txt"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert shown in saved.read_text(encoding="utf-8")  # saved before encrypting: the key encrypt then used
    assert run_cli("--vault", str(vault_path), "key", "save", str(saved)).code == 2  # never overwritten

    _lose_the_key()
    before = file_hashes(vault_path)
    locked = run_cli("--vault", str(vault_path), "mem", "list")
    _one_line_error(locked, "encrypted", "vodou key restore")
    assert file_hashes(vault_path) == before

    restored = run_cli("--vault", str(vault_path), "key", "restore", "--from", str(saved))
    assert restored.code == 0, restored.err
    assert "put back" in restored.out and str(vault_path) in restored.out
    cipher.forget_keys()  # a later process: the key comes from the store again
    listed = run_cli("--vault", str(vault_path), "mem", "list")
    assert listed.code == 0 and CANARY in listed.out, listed.err
    again = run_cli("--vault", str(vault_path), "key", "restore", "--from", str(saved))
    assert again.code == 0 and "matches" in again.out


def test_mistyped_or_foreign_recovery_key_is_one_line_and_stores_nothing(vault_path: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _encrypted_vault(vault_path, tmp_path)
    _lose_the_key()
    before = file_hashes(vault_path)
    groups = shown.split("-")
    swapped = groups[3][1] + groups[3][0] + groups[3][2:]
    if swapped == groups[3]:  # two equal letters: change one instead
        swapped = ("A" if groups[3][0] != "A" else "C") + groups[3][1:]
    cases = {
        "-".join([*groups[:3], swapped, *groups[4:]]): "mistyped",  # two letters swapped
        "-".join(groups[:-1]): "should have 56",  # a group left out
        shown.replace(groups[5], groups[5][:3] + "9"): "digits 2 to 7",  # a character no key has
        to_recovery(new_key()): "does not open",  # well formed, another installation's key
    }
    for typed, words in cases.items():
        monkeypatch.setenv(RECOVERY_ENV, typed)
        _one_line_error(run_cli("--vault", str(vault_path), "key", "restore"), words, "nothing was changed")
        assert VaultKeyStore().get() is None
    assert file_hashes(vault_path) == before
    monkeypatch.setenv(RECOVERY_ENV, shown.lower().replace("-", " "))
    assert run_cli("--vault", str(vault_path), "key", "restore").code == 0
    assert CANARY in run_cli("--vault", str(vault_path), "mem", "list").out


def test_a_backup_opens_on_a_new_computer_with_the_recovery_key(vault_path: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _encrypted_vault(vault_path, tmp_path)
    backup = tmp_path / "carried.sqlite"
    assert run_cli("--vault", str(vault_path), "backup", str(backup)).code == 0
    assert cipher.is_encrypted(backup)

    new_home = tmp_path / "new-computer"  # another profile: empty keyring, no vault yet
    new_home.mkdir()
    monkeypatch.setenv("VODOU_HOME", str(new_home))
    cipher.forget_keys()
    new_vault = new_home / "vault.sqlite"
    assert VaultKeyStore().get() is None
    _one_line_error(run_cli("--vault", str(new_vault), "restore", str(backup)), "vodou key restore")
    assert not new_vault.exists()

    monkeypatch.setenv(RECOVERY_ENV, shown)
    checked = run_cli("--vault", str(new_vault), "key", "restore", "--check", str(backup))
    assert checked.code == 0 and str(backup) in checked.out, checked.err
    monkeypatch.delenv(RECOVERY_ENV)
    cipher.forget_keys()
    assert run_cli("--vault", str(new_vault), "restore", str(backup)).code == 0
    listed = run_cli("--vault", str(new_vault), "mem", "list")
    assert listed.code == 0 and CANARY in listed.out, listed.err


def test_a_different_stored_key_is_not_replaced_without_being_asked(vault_path: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _encrypted_vault(vault_path, tmp_path)
    other = new_key()
    _lose_the_key()
    VaultKeyStore().put(other)  # a fresh key made on this computer since, for another vault
    monkeypatch.setenv(RECOVERY_ENV, shown)
    _one_line_error(run_cli("--vault", str(vault_path), "key", "restore"), "--replace", "nothing was changed")
    assert VaultKeyStore().get() == other
    assert run_cli("--vault", str(vault_path), "key", "restore", "--replace").code == 0
    assert VaultKeyStore().get() == from_recovery(shown)


def test_key_show_on_a_plain_vault_says_so_and_makes_no_key(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "a plain memory", Origin(kind="cli"))
    keys_before = sorted(p.name for p in paths.config_dir().rglob("*"))
    for argv in (["key", "show"], ["key", "show", "--json"]):
        shown = run_cli("--vault", str(vault_path), *argv)
        _one_line_error(shown, f"the vault at {vault_path} is not encrypted", "vodou encrypt")
        assert shown.out == ""
    assert VaultKeyStore().get() is None
    assert sorted(p.name for p in paths.config_dir().rglob("*")) == keys_before


def test_key_save_before_encrypting_says_the_vault_is_not_encrypted_yet(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "a plain memory", Origin(kind="cli"))
    saved = run_cli("--vault", str(vault_path), "key", "save", str(tmp_path / "k.txt"))
    assert saved.code == 0 and "not encrypted yet: this is the key `vodou encrypt` will use" in saved.out
