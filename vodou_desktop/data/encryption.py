"""Converting a vault to and from encryption at rest (DATA-3), in place.

SQLite3 Multiple Ciphers cannot ``PRAGMA rekey`` a database in WAL mode, and its online backup
cannot copy between a plain and an encrypted database, so the conversion is a copy: while no other
process has the vault open (``exclusive_hold``, which also takes it out of WAL), the file is copied,
the copy is rekeyed (to the new key, or to none) and checked, a verified copy goes to the backups
folder first, and only then does the converted file take the vault's name. The vault's backups in
the backups folder (rolling ones, and those ``vodou backup`` wrote there) follow it: plain ones are
encrypted when the vault is, so no plain copy of an encrypted vault stays there. After ``decrypt``
they stay encrypted (their key is kept) until they roll away.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import apsw

from vodou_desktop import config
from vodou_desktop.data.backup import (
    Progress,
    VaultCounts,
    check_copy,
    exclusive_hold,
    fsync_file,
    fsync_folder,
    remove_with_side_files,
    timestamp,
)
from vodou_desktop.data.rolling import backup_folder, rolling_backups
from vodou_desktop.errors import Conflict, VaultUnavailable
from vodou_desktop.vault import cipher
from vodou_desktop.vault.connection import create_private_file, open_connection, scalar, translate_errors


@dataclass(frozen=True)
class ConversionReport:
    vault: Path
    encrypted: bool
    backup: Path
    counts: VaultCounts
    backups_converted: int

    def as_json(self) -> dict[str, object]:
        return {"vault": str(self.vault), "encrypted": self.encrypted, "backup": str(self.backup),
                "memories": self.counts.memories, "backups_converted": self.backups_converted}


def encrypt_vault(vault: Path, key: str, progress: Progress | None = None,
                  settings: config.Settings | None = None) -> ConversionReport:
    """Encrypt the plain vault ``vault`` with ``key`` (the caller has stored or shown the key)."""
    if not vault.exists():
        raise VaultUnavailable(f"No vault at {vault}")
    if cipher.is_encrypted(vault):
        raise Conflict(f"The vault {vault} is already encrypted")
    return _convert(vault, key, progress, settings or config.load())


def decrypt_vault(vault: Path, progress: Progress | None = None,
                  settings: config.Settings | None = None) -> ConversionReport:
    """Write the encrypted vault ``vault`` back as a plain SQLite file (needs its key here)."""
    if not vault.exists():
        raise VaultUnavailable(f"No vault at {vault}")
    if not cipher.is_encrypted(vault):
        raise Conflict(f"The vault {vault} is not encrypted")
    cipher.key_for(vault)  # the one clear line when no key opens it, before anything else
    return _convert(vault, None, progress, settings or config.load())


def _convert(vault: Path, key: str | None, progress: Progress | None, settings: config.Settings) -> ConversionReport:
    folder = backup_folder(settings, create=True)
    verb = "encrypt" if key is not None else "decrypt"
    old_key = cipher.key_for(vault)
    converted = vault.with_name(f"{vault.name}.{verb}ing")
    backup = folder / f"{vault.name}.before-{verb}-{timestamp()}"
    remove_with_side_files(converted)
    step = progress or (lambda done, total: None)
    with exclusive_hold(vault):  # nobody else has it open; it is out of WAL, so the file is all of it
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
            create_private_file(backup)
            shutil.copyfile(converted if key is not None else vault, backup)
            fsync_file(backup)
            step(3, STEPS)
        except BaseException as exc:
            remove_with_side_files(converted)
            remove_with_side_files(backup)
            if isinstance(exc, OSError):  # a full disk, a folder gone: said in one line, the vault untouched
                raise VaultUnavailable(f"The vault was not {verb}ed: {exc.strerror or exc}. It was left as it "
                                       "was.") from exc
            raise
        os.replace(converted, vault)
        fsync_folder(vault.parent)
    cipher.forget_keys()
    if key is not None:
        cipher.remember_key(vault, key)
    converted_backups = _encrypt_plain_backups(folder, vault, key) if key is not None else 0
    open_connection(vault, create=False).close()  # back to WAL, and proof that the key opens it
    step(STEPS, STEPS)
    return ConversionReport(vault, key is not None, backup, counts, converted_backups)


STEPS = 4  # copy, convert, backup, reopen


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
        made |= {p for p in folder.iterdir() if p.name.startswith(f"{vault.name}.backup-")
                 and not p.name.endswith((".partial", "-journal", "-wal", "-shm"))}
        made |= {p for p in folder.iterdir() if p.name.startswith(f"{vault.name}.before-")}
    return sorted(made)


def _encrypt_plain_backups(folder: Path, vault: Path, key: str) -> int:
    """Encrypt in place (same name, same contents) each plain backup of ``vault`` in the backups folder."""
    done = 0
    for path in backups_in_folder(folder, vault):
        if cipher.is_encrypted(path):
            continue
        work = path.with_name(path.name + ".encrypting")
        create_private_file(work)
        shutil.copyfile(path, work)
        try:
            rekey_file(work, None, key)
        except BaseException:
            remove_with_side_files(work)
            raise
        os.replace(work, path)
        done += 1
    return done
