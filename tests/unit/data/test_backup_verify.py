"""DATA-1: a backup proves it is intact (manifest, integrity_check, FTS5 check) before a restore
uses it; a vault that vanished beside its copies is never replaced by an empty one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import apsw
import pytest

from tests.support import file_hashes, run_cli
from vodou_desktop.data.backup import backup_vault, manifest_path, restore_vault, verify_backup
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.doctor import Check
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.keystore import VaultKeyStore

TEXT = "the heroncanary nests by the weir"


def _backup(vault_path: Path, dest: Path) -> Path:
    with Vault.open(vault_path) as vault:
        remember(vault, TEXT, Origin(kind="cli"))
    backup_vault(vault_path, dest)
    return dest


def _chunk_texts(path: Path) -> list[str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [str(r[0]) for r in conn.execute("SELECT text FROM chunks ORDER BY id")]
    finally:
        conn.close()


def _flipped(source: Path, dest: Path, at: int) -> Path:
    data = bytearray(source.read_bytes())
    data[at] ^= 0x01  # one bit
    dest.write_bytes(bytes(data))
    return dest


def test_a_backup_carries_a_manifest_that_verifies(vault_path: Path, tmp_path: Path) -> None:
    copy = _backup(vault_path, tmp_path / "copy.sqlite")
    manifest = json.loads(manifest_path(copy).read_text())
    assert manifest["memories"] == 1 and manifest["encrypted"] is False and manifest["vodou"]
    assert manifest["schema"] and len(manifest["sha256"]) == 64
    assert manifest_path(copy).stat().st_mode & 0o777 == 0o600
    result = run_cli("backup", "--verify", str(copy))
    assert result.code == 0, result.err
    assert "matches its manifest" in result.out and "full-text index" in result.out


def test_a_bit_flipped_in_a_memory_is_refused_in_one_line(vault_path: Path, tmp_path: Path) -> None:
    copy = _backup(vault_path, tmp_path / "copy.sqlite")
    before = file_hashes(vault_path)
    raw = copy.read_bytes()
    places = [i for i in range(len(raw)) if raw.startswith(TEXT.encode(), i)]
    assert places
    in_chunks = 0
    for n, at in enumerate(places):
        bad = _flipped(copy, tmp_path / f"bad-{n}.sqlite", at + 4)
        shutil.copyfile(manifest_path(copy), manifest_path(bad))
        for args in (("backup", "--verify", str(bad)), ("--vault", str(vault_path), "restore", str(bad))):
            result = run_cli(*args)
            assert result.code == 2 and result.err.count("\n") == 1, result.err
            assert "does not match its manifest" in result.err
        manifest_path(bad).unlink()  # a backup made before manifests: the full-text check still catches it
        if _chunk_texts(bad) != [TEXT]:
            in_chunks += 1
            result = run_cli("--vault", str(vault_path), "restore", str(bad))
            assert result.code == 2 and result.err.count("\n") == 1, result.err
            assert "full-text index" in result.err
    assert in_chunks, "no flipped byte changed a memory's text"
    assert file_hashes(vault_path) == before
    assert not list(tmp_path.glob("*.before-restore-*"))


def test_a_damaged_encrypted_backup_is_refused_in_one_line(vault_path: Path, tmp_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, TEXT, Origin(kind="cli"))
    assert run_cli("--vault", str(vault_path), "encrypt").code == 0
    copy = tmp_path / "copy.sqlite"
    backup_vault(vault_path, copy)
    size = copy.stat().st_size
    for at in (100, 4096 + 50, size // 2, size - 100):  # the header, the first pages, the middle, the end
        bad = _flipped(copy, tmp_path / "bad.sqlite", at)
        for manifest in (True, False):
            if manifest:
                shutil.copyfile(manifest_path(copy), manifest_path(bad))
            else:
                manifest_path(bad).unlink()
            cipher.forget_keys()
            for args in (("backup", "--verify", str(bad)), ("--vault", str(vault_path), "restore", str(bad))):
                result = run_cli(*args)
                assert result.code == 2 and result.err.count("\n") == 1, result.err
                assert "Traceback" not in result.err
    assert cipher.key_opens(vault_path, str(VaultKeyStore().get()))


def test_a_vanished_vault_is_never_replaced_by_an_empty_one(vault_path: Path, tmp_path: Path) -> None:
    copy = _backup(vault_path, tmp_path / "copy.sqlite")
    assert run_cli("--vault", str(vault_path), "restore", str(copy)).code == 0
    kept = next(tmp_path.glob("vault.sqlite.before-restore-*"))
    vault_path.unlink()  # what a restore killed between its renames used to leave
    for args in (("mem", "list"), ("mem", "add", "must not land in a new vault")):
        result = run_cli("--vault", str(vault_path), *args)
        assert result.code == 2 and result.err.count("\n") == 1, result.err
        assert kept.name in result.err and "vodou restore" in result.err
        assert not vault_path.exists()
    assert run_cli("--vault", str(vault_path), "restore", str(kept)).code == 0
    assert TEXT in run_cli("--vault", str(vault_path), "mem", "list").out


def test_verify_refuses_a_manifest_that_lies_about_the_count(vault_path: Path, tmp_path: Path) -> None:
    copy = _backup(vault_path, tmp_path / "copy.sqlite")
    manifest = json.loads(manifest_path(copy).read_text())
    manifest["memories"] = 7
    manifest_path(copy).write_text(json.dumps(manifest))
    with pytest.raises(VaultUnavailable, match="its manifest says 7"):
        verify_backup(copy)
    with pytest.raises(VaultUnavailable, match="its manifest says 7"):
        restore_vault(copy, vault_path)


def test_a_plain_backup_over_an_encrypted_vault_keeps_encryption_unless_told(vault_path: Path,
                                                                              tmp_path: Path) -> None:
    copy = _backup(vault_path, tmp_path / "plain.sqlite")
    assert run_cli("--vault", str(vault_path), "encrypt").code == 0
    result = run_cli("--vault", str(vault_path), "restore", str(copy))  # not a terminal: the default
    assert result.code == 0, result.err
    assert "encrypted with the vault's key" in result.out
    assert cipher.is_encrypted(vault_path) and TEXT in run_cli("--vault", str(vault_path), "mem", "list").out
    result = run_cli("--vault", str(vault_path), "restore", "--plain", str(copy))
    assert result.code == 0, result.err
    assert "NOT encrypted" in result.out and not cipher.is_encrypted(vault_path)


def test_doctor_says_whether_the_latest_backup_verifies(vault_path: Path) -> None:
    from vodou_desktop import config
    from vodou_desktop.data.rolling import backup_folder
    from vodou_desktop.ingest.doctor import Setup, run_doctor

    def check_latest_backup(vault: Vault) -> Check:
        return next(c for c in run_doctor(vault, Setup(model=None, backups=backup_folder(config.load())))
                    if c.name == "latest_backup")

    with Vault.open(vault_path) as vault:
        remember(vault, TEXT, Origin(kind="cli"))
        assert check_latest_backup(vault).passed  # none yet: nothing to verify, said so
        assert run_cli("--vault", str(vault_path), "backup").code == 0
        check = check_latest_backup(vault)
        assert check.passed and "matches its manifest" in check.detail
        latest = Path(check.detail.split(" matches")[0])
        _flipped(latest, latest, latest.stat().st_size // 2)
        check = check_latest_backup(vault)
    assert not check.passed and "does not match its manifest" in check.detail and check.detail.count("\n") == 0


def test_a_disk_that_fills_up_gives_one_line_and_leaves_nothing(vault_path: Path, tmp_path: Path) -> None:
    """``ulimit -f``: writes past the limit fail with EFBIG (Python ignores SIGXFSZ), as on a full disk."""
    import os
    import resource
    import subprocess
    import sys

    _backup(vault_path, tmp_path / "first.sqlite")
    size = vault_path.stat().st_size
    before = _chunk_texts(vault_path)
    out = tmp_path / "out"
    out.mkdir()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, size // 2))

    env = {**os.environ, "VODOU_EMBEDDER": "none", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    for args in (("backup", str(out / "copy.sqlite")), ("encrypt",)):
        run = subprocess.run([sys.executable, "-m", "vodou_desktop", "--vault", str(vault_path), *args],
                             preexec_fn=limit, env=env, capture_output=True, text=True, timeout=120)
        errors = [line for line in run.stderr.splitlines() if not line.startswith("WARNING")]
        assert run.returncode == 2 and len(errors) == 1, run.stderr
        assert "not made" in errors[0] or "not encrypted" in errors[0]
    assert list(out.iterdir()) == []
    assert _chunk_texts(vault_path) == before == [TEXT] and not cipher.is_encrypted(vault_path)
    left = {p.name for p in tmp_path.iterdir() if p.name.startswith("vault.sqlite")}
    assert left - {"vault.sqlite-wal", "vault.sqlite-shm"} == {"vault.sqlite"}  # no copy, no journal
