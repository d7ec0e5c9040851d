"""DATA-1, DATA-2, DATA-5: properties of the person's files that a kill -9 test cannot see.

- every file Vodou writes (a backup, its manifest, an export, a recovery key file, the list of copies)
  is flushed to disk under its temporary name, holding every byte, before the one rename that gives it
  its name, and the folder is flushed after (the calls are recorded: the page cache survives a kill);
- a backup that changes between its check and its copy never takes the vault's place;
- a copy written outside the backups folder and deleted since is not named by encrypt or erase;
- an export of a syncing vault holds no sync setting and no form of the sync key.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import file_hashes, run_cli
from vodou_desktop.data import backup as backup_module
from vodou_desktop.data import copies
from vodou_desktop.data.backup import backup_vault, restore_vault
from vodou_desktop.data.export import ExportScope, write_export_file, write_jsonl
from vodou_desktop.data.recovery import save_recovery_file
from vodou_desktop.errors import VaultUnavailable
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync import sealing
from vodou_desktop.vault import Vault
from vodou_desktop.vault.keystore import new_key

Call = tuple[str, str, str, int]  # (fsync | replace, path, destination, size of the file flushed or renamed)


@contextlib.contextmanager
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Call]]:
    """Every ``os.fsync`` (the file or folder its descriptor names, and its size) and ``os.replace``."""
    calls: list[Call] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        calls.append(("fsync", path, "", os.fstat(fd).st_size))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str], **kw: object) -> None:
        calls.append(("replace", os.path.realpath(src), os.path.realpath(dst), os.stat(src).st_size))
        real_replace(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    yield calls


def _vault(path: Path) -> Path:
    with Vault.open(path) as vault:
        remember(vault, "the heron nests by the mill", Origin(kind="cli"))
    return path


WRITERS: dict[str, Callable[[Path], list[Path]]] = {  # each writes into the folder; returns the files it made
    "backup and its manifest": lambda d: [backup_vault(_vault(d / "v.sqlite"), d / "out" / "b.sqlite").path,
                                          d / "out" / "b.sqlite.manifest"],
    "export": lambda d: [_export_to(d)],
    "recovery key file": lambda d: [save_recovery_file(new_key(), d / "out" / "recovery.txt")],
    "list of copies": lambda d: [_note_copy(d)],
}


def _export_to(folder: Path) -> Path:
    vault = _vault(folder / "v.sqlite")
    dest = folder / "out" / "dump.jsonl"
    with Vault.open(vault) as v:
        write_export_file(dest, lambda out: write_jsonl(v, ExportScope(), out))
    return dest


def _note_copy(folder: Path) -> Path:
    made = folder / "out" / "somewhere.jsonl"
    made.write_text("{}")
    copies.record(made, "export")
    return copies._registry()


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_file_is_flushed_whole_under_its_temporary_name_before_its_one_rename(
        writer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out").mkdir()
    with recorded(monkeypatch) as calls:
        made = WRITERS[writer](tmp_path)
    for final in made:
        final = final.resolve()
        renames = [i for i, c in enumerate(calls) if c[0] == "replace" and c[2] == str(final)]
        assert len(renames) == 1, (final, calls)  # exactly one rename into the final name
        at = renames[0]
        temp, size = calls[at][1], calls[at][3]
        assert temp.endswith(".partial") and Path(temp).parent == final.parent
        flushed = [c for c in calls[:at] if c[0] == "fsync" and c[1] == temp]
        assert flushed and flushed[-1][3] == size == final.stat().st_size  # flushed holding every byte
        folder = [c for c in calls[at + 1:] if c[0] == "fsync" and c[1] == str(final.parent)]
        assert folder, f"the folder of {final.name} was not flushed after its rename"


def test_a_backup_that_changes_while_it_is_copied_never_replaces_the_vault(
        vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _vault(vault_path)
    made = backup_vault(vault_path, tmp_path / "b.sqlite").path
    with Vault.open(vault_path) as vault:
        remember(vault, "written after the backup", Origin(kind="cli"))
    before = file_hashes(vault_path)
    real_copy = shutil.copyfile

    def copy_then_flip(src: object, dst: object, **kw: object) -> object:  # the file changed between check and copy
        out = real_copy(src, dst, **kw)  # type: ignore[call-overload]
        with open(dst, "r+b") as fh:  # type: ignore[call-overload]
            fh.seek(5000)
            byte = fh.read(1)
            fh.seek(5000)
            fh.write(bytes([byte[0] ^ 0x01]))
        return out

    monkeypatch.setattr(backup_module.shutil, "copyfile", copy_then_flip)
    with pytest.raises(VaultUnavailable, match="changed while it was being copied"):
        restore_vault(made, vault_path)
    assert file_hashes(vault_path) == before
    assert sorted(p.name for p in vault_path.parent.iterdir() if p.name.startswith(vault_path.name)) == \
        sorted(before)  # no copy left beside it, no before-restore copy made


def test_a_copy_written_outside_the_backups_folder_and_deleted_since_is_not_named(
        vault_path: Path, tmp_path: Path) -> None:
    """Encrypt and erase name the outside copies they cannot reach, and only those still there."""
    _vault(vault_path)
    kept, gone = tmp_path / "kept.jsonl", tmp_path / "gone.jsonl"
    for path in (kept, gone):
        assert run_cli("--vault", str(vault_path), "export", str(path)).code == 0
    gone.unlink()
    with Vault.open(vault_path) as vault:
        fact = remember(vault, "the ocelot canary", Origin(kind="cli"))
    erased = run_cli("--vault", str(vault_path), "mem", "erase", str(fact), "--yes")
    assert erased.code == 0, erased.err
    assert str(kept) in erased.out and str(gone) not in erased.out
    encrypted = run_cli("--vault", str(vault_path), "encrypt")
    assert encrypted.code == 0, encrypted.err
    said = encrypted.out + encrypted.err
    assert str(kept) in said and str(gone) not in said


def test_an_export_of_a_syncing_vault_holds_no_sync_setting_nor_the_key(tmp_path: Path) -> None:
    """One syncing device is enough: no second device's different id is needed to see a leak."""
    vault, folder, key_file = tmp_path / "v.sqlite", tmp_path / "synced", tmp_path / "join-key.txt"
    folder.mkdir()
    _vault(vault)
    setup = run_cli("--vault", str(vault), "sync", "setup", str(folder), "--key-file", str(key_file))
    assert setup.code == 0, setup.err
    shown = key_file.read_text().splitlines()[-1]
    secret = sealing.parse_sync_key(shown)
    assert secret is not None
    with Vault.open(vault) as v:
        settings = dict(v.read(lambda c: c.execute("SELECT key, value FROM settings").fetchall()))
    assert settings["sync_key"] and settings["sync_device_id"]
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(vault), "export", str(dump)).code == 0
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    assert not [r for r in records if r["type"] == "setting" and r["key"].startswith("sync_")]
    raw = dump.read_bytes()
    forms = {shown, shown.replace("-", ""), secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode(),
             base64.b32encode(secret).decode().rstrip("="), settings["sync_key"], settings["sync_device_id"]}
    assert [f for f in forms if f.encode() in raw] == []
    assert secret not in raw
