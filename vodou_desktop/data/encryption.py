"""Converting a vault to and from encryption at rest (DATA-3), in place, resumably.

SQLite3 Multiple Ciphers cannot ``PRAGMA rekey`` a database in WAL mode, and its online backup
cannot copy between a plain and an encrypted database, so the conversion is a copy: while no other
process has the vault open (``exclusive_hold``, which also takes it out of WAL) and the vault's
journal records the operation, the file is copied, the copy is rekeyed (to the new key, or to none)
and checked, a verified copy goes to the backups folder first (written whole under a temporary name,
then renamed), and only then does the converted file take the vault's name.

Then the copies follow it. After ``encrypt``, every plain copy Vodou keeps is encrypted in place
(each through a temporary file, renamed over it; its manifest updated): the backups in the backups
folder (rolling ones, those ``vodou backup`` wrote there, ``before-`` copies) and the
``before-restore`` copies beside the vault; half-written leftovers (``.partial``) are removed. A
rerun after a crash does what is left: on a vault already encrypted it finishes the copies. Copies
Vodou wrote elsewhere (``data.copies``) are listed in plain words, since it cannot reach them. After
``decrypt`` the backups stay encrypted (their key is kept) until they roll away.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from vodou_desktop import config
from vodou_desktop.data import copies
from vodou_desktop.data.backup import (
    MANIFEST,
    Progress,
    VaultCounts,
    check_copy,
    exclusive_hold,
    free_name,
    manifest_path,
    read_manifest,
    remove_leftovers,
    timestamp,
    write_manifest,
)
from vodou_desktop.data.rolling import backup_folder, rolling_backups
from vodou_desktop.errors import Conflict, VaultUnavailable
from vodou_desktop.vault import cipher
from vodou_desktop.vault.atomic import (
    TEMPORARY,
    Journal,
    copies_beside,
    copy_file,
    finish_interrupted,
    fsync_file,
    fsync_folder,
    new_file,
    remove_stale,
    remove_with_side_files,
)
from vodou_desktop.vault.connection import create_private_file, open_connection, scalar, translate_errors


@dataclass(frozen=True)
class ConversionReport:
    vault: Path
    encrypted: bool
    backup: Path | None  # None: a rerun that found the vault already converted
    counts: VaultCounts
    backups_converted: int
    leftovers_removed: int = 0
    unreachable: list[copies.OutsideCopy] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"vault": str(self.vault), "encrypted": self.encrypted,
                "backup": str(self.backup) if self.backup else None, "memories": self.counts.memories,
                "backups_converted": self.backups_converted, "leftovers_removed": self.leftovers_removed,
                "not_reached": [{"path": str(c.path), "kind": c.kind, "encrypted": c.encrypted}
                                for c in self.unreachable]}

    def not_reached_sentence(self) -> str:
        """The copies outside Vodou's reach that are not encrypted, in plain words ("" when none)."""
        plain = [c for c in self.unreachable if not c.encrypted]
        if not plain or not self.encrypted:
            return ""
        return (f"{len(plain)} copies Vodou wrote outside its backups folder are not encrypted and were not "
                f"touched (delete them or keep them somewhere safe): {'; '.join(c.words() for c in plain)}")


def encrypt_vault(vault: Path, key: str, progress: Progress | None = None,
                  settings: config.Settings | None = None) -> ConversionReport:
    """Encrypt the plain vault ``vault`` with ``key`` (the caller has stored or shown the key), then
    its copies; on a vault already encrypted (a rerun after a crash), finish the copies."""
    if not vault.exists():
        raise VaultUnavailable(f"No vault at {vault}")
    settings = settings or config.load()
    finish_interrupted(vault)
    if cipher.is_encrypted(vault):
        current = key if cipher.key_opens(vault, key) else cipher.key_for(vault)
        assert current is not None
        counts = _counts(vault)
        return _finish_copies(vault, current, settings, backup=None, counts=counts)
    return _convert(vault, key, progress, settings)


def decrypt_vault(vault: Path, progress: Progress | None = None,
                  settings: config.Settings | None = None) -> ConversionReport:
    """Write the encrypted vault ``vault`` back as a plain SQLite file (needs its key here)."""
    if not vault.exists():
        raise VaultUnavailable(f"No vault at {vault}")
    finish_interrupted(vault)  # a plain ``.decrypting`` copy left by a killed decrypt goes here
    if not cipher.is_encrypted(vault):
        raise Conflict(f"The vault {vault} is not encrypted")
    cipher.key_for(vault)  # the one clear line when no key opens it, before anything else
    return _convert(vault, None, progress, settings or config.load())


def _counts(vault: Path) -> VaultCounts:
    from vodou_desktop.data.backup import count_contents

    conn = open_connection(vault, create=False, readonly=True)
    try:
        with translate_errors(vault):
            return count_contents(conn)
    finally:
        conn.close()


def _convert(vault: Path, key: str | None, progress: Progress | None, settings: config.Settings) -> ConversionReport:
    folder = backup_folder(settings, create=True)
    verb = "encrypt" if key is not None else "decrypt"
    old_key = cipher.key_for(vault)
    converted = vault.with_name(f"{vault.name}.{verb}ing")
    backup = free_name(folder, f"{vault.name}.before-{verb}-{timestamp()}")
    step = progress or (lambda done, total: None)
    remove_leftovers(folder, f"{vault.name}.")  # what a killed backup or conversion left half written
    with Journal.hold(vault) as journal, exclusive_hold(vault):  # nobody else has it open; out of WAL
        journal.record(op=verb, work=str(converted))
        remove_with_side_files(converted)
        try:
            step(0, STEPS)
            create_private_file(converted)
            shutil.copyfile(vault, converted)
            step(1, STEPS)
            counts = rekey_file(converted, old_key, key)
            step(2, STEPS)
            # The backup first: a verified copy in the backups folder before the vault changes. It is
            # encrypted whichever way the conversion goes (the new file when encrypting, the current
            # one when decrypting), so no plain copy of an encrypted vault is left behind.
            copy_file(converted if key is not None else vault, backup)
            write_manifest(backup, counts, encrypted=True, key=key if key is not None else old_key)
            step(3, STEPS)
        except BaseException as exc:
            remove_with_side_files(converted)
            remove_with_side_files(backup)
            remove_with_side_files(manifest_path(backup))
            if isinstance(exc, OSError):  # a full disk, a folder gone: said in one line, the vault untouched
                raise VaultUnavailable(f"The vault was not {verb}ed: {exc.strerror or exc}. It was left as it "
                                       "was.") from exc
            raise
        os.replace(converted, vault)
        fsync_folder(vault.parent)
    cipher.forget_keys()
    if key is not None:
        cipher.remember_key(vault, key)
    open_connection(vault, create=False).close()  # back to WAL, and proof that the key opens it
    if key is None:
        step(STEPS, STEPS)
        return ConversionReport(vault, False, backup, counts, 0)
    report = _finish_copies(vault, key, settings, backup=backup, counts=counts)
    step(STEPS, STEPS)
    return report


STEPS = 4  # copy, convert, backup, reopen


def _finish_copies(vault: Path, key: str, settings: config.Settings, *, backup: Path | None,
                   counts: VaultCounts) -> ConversionReport:
    """After the vault is encrypted: encrypt every plain copy Vodou keeps, remove half-written ones,
    and list the copies it cannot reach."""
    folder = backup_folder(settings, create=True)
    removed = len(remove_leftovers(folder, f"{vault.name}.")) + len(remove_stale(vault.parent, prefix=vault.name))
    converted = 0
    for path in kept_copies(folder, vault):
        if cipher.is_encrypted(path):
            continue
        if path.stat().st_size == 0:  # an empty file under a backup's name holds nothing
            path.unlink()
            manifest_path(path).unlink(missing_ok=True)
            removed += 1
            continue
        _encrypt_in_place(path, key)
        converted += 1
    unreachable = copies.outside()
    return ConversionReport(vault, True, backup, counts, converted, removed, unreachable)


def rekey_file(path: Path, old_key: str | None, new_key: str | None) -> VaultCounts:
    """Re-encrypt the closed, rollback-journal file ``path`` in place (``None``: plain), then check it.

    Online backup cannot copy between a plain and an encrypted database (their pages reserve
    different byte counts), and ``rekey`` refuses WAL mode: hence a copy out of WAL, rekeyed.
    """
    conn = apsw.Connection(str(path))
    try:
        with translate_errors(path):
            if old_key is not None:
                cipher.apply_key(conn, old_key)
            if str(scalar(conn, "PRAGMA journal_mode")).lower() != "delete":
                conn.execute("PRAGMA journal_mode=DELETE")
            cipher.rekey(conn, new_key)
    finally:
        conn.close()
    counts = check_copy(path, new_key)
    fsync_file(path)
    return counts


def backups_in_folder(folder: Path, vault: Path) -> list[Path]:
    """Every backup of ``vault`` that Vodou wrote in ``folder``: rolling (``.daily-``), made by
    ``vodou backup`` with no path (``.backup-``) and before a conversion (``.before-``)."""
    made = set(rolling_backups(folder, vault))
    if folder.is_dir():
        made |= {p for p in folder.iterdir() if p.name.startswith((f"{vault.name}.backup-", f"{vault.name}.before-"))
                 and not p.name.endswith((TEMPORARY, MANIFEST, "-journal", "-wal", "-shm"))}
    return sorted(made)


def kept_copies(folder: Path, vault: Path) -> list[Path]:
    """Every copy of ``vault`` Vodou keeps: its backups in ``folder`` and the ``before-`` copies beside it."""
    beside = [p for p in copies_beside(vault) if p.name.startswith(f"{vault.name}.before-")
              and not p.name.endswith(MANIFEST)]
    return sorted(set(backups_in_folder(folder, vault)) | set(beside))


def _encrypt_in_place(path: Path, key: str) -> None:
    """``path`` (a plain copy) encrypted under the same name: the encrypted copy is made whole under
    a temporary name, checked, its manifest written, then renamed over it."""
    had_manifest = read_manifest(path) is not None
    with new_file(path, replace=True) as work:
        shutil.copyfile(path, work)
        counts = rekey_file(work, None, key)
        if had_manifest:  # first: a crash before the rename leaves a plain copy, encrypted again on a rerun
            write_manifest(path, counts, encrypted=True, key=key, contents=work)
