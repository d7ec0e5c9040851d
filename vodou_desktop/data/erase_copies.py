"""Erase reaches the copies Vodou keeps (GOV-8, DATA-1).

After memories are erased from the vault, every copy Vodou keeps of it (the backups in its backups
folder, ``before-`` copies there and beside the vault) that still holds them is rewritten: the copy
is made under a temporary name, the same erase runs on it (so the same rows go, with their lineage,
full-text entries and freed pages, as ``secure_delete`` zeroes them), it is checked, its manifest is
updated, and it is renamed over the old one (``vault.atomic``). A copy with none of them is left
alone. Copies Vodou cannot open (no key here) and copies it wrote elsewhere (``data.copies``) are
named, in plain words, as not reached.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from vodou_desktop import config
from vodou_desktop.data import copies
from vodou_desktop.data.backup import check_copy, read_manifest, write_manifest
from vodou_desktop.data.encryption import kept_copies
from vodou_desktop.data.rolling import backup_folder
from vodou_desktop.errors import KnownError
from vodou_desktop.vault import Vault, cipher
from vodou_desktop.vault.atomic import new_file
from vodou_desktop.vault.connection import translate_errors

if TYPE_CHECKING:
    from vodou_desktop.governance.forget import Forgetting

log = logging.getLogger(__name__)
Holds = Callable[[apsw.Connection], bool]  # does this copy hold any of the erased rows?
Erase = Callable[["Forgetting"], Any]  # the same erase, on a copy


@dataclass
class CopiesErased:
    rewritten: list[Path] = field(default_factory=list)
    not_reached: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"copies_rewritten": len(self.rewritten), "copies_not_reached": self.not_reached}


def sentence(result: dict[str, Any]) -> str:
    """One line for the CLI and the app on the copies an erase rewrote or could not reach."""
    rewritten, missed = result.get("copies_rewritten", 0), result.get("copies_not_reached", [])
    text = f"rewrote {rewritten} backups and earlier copies that held it" if rewritten else ""
    if missed:
        text += ("; " if text else "") + (f"{len(missed)} copies were not reached and may still hold it: "
                                          + "; ".join(missed))
    return text


def erase_in_copies(vault: Path, erase: Erase, holds: Holds) -> CopiesErased:
    """Run ``erase`` on every copy of ``vault`` Vodou keeps that ``holds`` the erased rows."""
    from vodou_desktop.governance.forget import Forgetting

    done = CopiesErased()
    for path in kept_copies(backup_folder(config.load()), vault):
        try:
            key = cipher.key_for(path)
            if not _holds(path, key, holds):
                continue
            _rewrite(path, key, lambda v: erase(Forgetting(v, copies=False)))
        except KnownError as exc:
            log.warning("erase could not rewrite %s: %s", path, exc)
            done.not_reached.append(f"{path} ({exc})")
            continue
        done.rewritten.append(path)
    done.not_reached += [c.words() for c in copies.outside()]
    return done


def _holds(path: Path, key: str | None, holds: Holds) -> bool:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        with translate_errors(path):
            if key is not None:
                cipher.apply_key(conn, key)
            return holds(conn)
    finally:
        conn.close()


def _rewrite(path: Path, key: str | None, erase: Callable[[Vault], Any]) -> None:
    had_manifest = read_manifest(path) is not None
    with new_file(path, replace=True) as work:
        shutil.copyfile(path, work)
        if key is not None:
            cipher.remember_key(work, key)
        with Vault.open(work) as copy:
            erase(copy)
        conn = apsw.Connection(str(work))  # one self-contained file again, as a backup is
        try:
            with translate_errors(work):
                if key is not None:
                    cipher.apply_key(conn, key)
                conn.execute("PRAGMA journal_mode=DELETE").fetchall()
        finally:
            conn.close()
        counts = check_copy(work, key)
        if had_manifest:
            write_manifest(path, counts, encrypted=key is not None, key=key, contents=work)
