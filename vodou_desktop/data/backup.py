"""Whole-vault backup and restore (DATA-1).

A backup is SQLite's online backup of the vault into a new single file, taken in one step so that
it is one consistent snapshot even while the app, the bridge or the CLI keep writing (WAL lets the
copy read while they write). The copy is checked with ``integrity_check`` before it gets its final
name. An encrypted vault gives an encrypted backup, under the same key.

A restore checks the copy (integrity, is a vault, schema not newer than this Vodou), makes sure
no other process has the vault open, moves the current vault aside (never deleted) and puts a copy
of the backup in its place.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import apsw

from vodou_desktop.errors import InvalidInput, VaultUnavailable, damaged_vault, newer_vault, not_a_vault
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.cipher import apply_key, key_for
from vodou_desktop.vault.connection import create_private_file, open_connection, scalar, translate_errors
from vodou_desktop.vault.migrations import applied_migrations
from vodou_desktop.vault.schema import MIGRATIONS
from vodou_desktop.words import plural

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (pages done, pages in all)
SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class VaultCounts:
    memories: int
    forgotten: int
    documents: int
    operator_memories: int

    def sentence(self) -> str:
        return (f"{plural(self.memories, 'memory')} ({self.forgotten} forgotten), "
                f"{plural(self.documents, 'library document')}, {plural(self.operator_memories, 'operator memory')}")


@dataclass(frozen=True)
class BackupReport:
    path: Path
    size: int
    counts: VaultCounts
    encrypted: bool

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "size": self.size, "encrypted": self.encrypted,
                "memories": self.counts.memories, "forgotten": self.counts.forgotten,
                "documents": self.counts.documents, "operator_memories": self.counts.operator_memories}


def timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def default_backup_name(vault: Path) -> str:
    return f"{vault.name}.backup-{timestamp()}"


def count_contents(conn: apsw.Connection) -> VaultCounts:
    every = FactFilter(project=ALL_PROJECTS, include_forgotten=True)
    live = FactFilter(project=ALL_PROJECTS)
    total = q.count_facts(conn, every)
    return VaultCounts(memories=total, forgotten=total - q.count_facts(conn, live),
                       documents=q.count_documents(conn, every),
                       operator_memories=int(scalar(conn, "SELECT count(*) FROM operator_memory")))


def backup_vault(vault: Path, dest: Path, *, progress: Progress | None = None) -> BackupReport:
    """Copy ``vault`` into ``dest`` (must not exist) and check the copy; an encrypted vault gives a
    copy encrypted with the same key."""
    if dest.exists():
        raise InvalidInput(f"{dest} already exists; choose another name (a backup never overwrites)")
    if not dest.parent.is_dir():
        raise InvalidInput(f"The backup folder does not exist: {dest.parent}")
    source = open_connection(vault, create=False)
    dest_key = key_for(vault)
    partial = dest.with_name(dest.name + ".partial")
    remove_with_side_files(partial)
    try:
        with translate_errors(vault):
            _copy(source, partial, dest_key, progress)
        counts = check_copy(partial, dest_key, shown=vault)
    except BaseException:
        remove_with_side_files(partial)
        raise
    finally:
        source.close()
    fsync_file(partial)
    os.replace(partial, dest)
    fsync_folder(dest.parent)
    return BackupReport(dest, dest.stat().st_size, counts, encrypted=dest_key is not None)


def _copy(source: apsw.Connection, partial: Path, key: str | None, progress: Progress | None) -> None:
    """Online backup of ``source`` into the new file ``partial`` (encrypted with ``key`` if given:
    the vault's own key, as sqlite3mc's backup only copies between databases of the same cipher).

    One step copies every page under one read transaction: a consistent snapshot while others
    write. Stepping in pieces would restart each time another process commits, and might never end.
    """
    create_private_file(partial)  # 0600, like the vault itself
    target = apsw.Connection(str(partial))
    try:
        if key is not None:
            apply_key(target, key)
        with target.backup("main", source, "main") as job:
            while not job.done:
                job.step(-1)
                if progress:
                    progress(job.pagecount - job.remaining, job.pagecount)
        target.execute("PRAGMA journal_mode=DELETE")  # a backup is one self-contained file
    finally:
        target.close()


def check_copy(path: Path, key: str | None = None, *, shown: Path | None = None) -> VaultCounts:
    """Integrity of a copy and what it holds; refuses a non-vault and a newer schema. Messages name
    ``shown`` (the vault a fresh copy was taken from) or else ``path``."""
    shown = shown or path
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        with translate_errors(shown):
            if key is not None:
                apply_key(conn, key)
            result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            if result != ["ok"]:
                log.info("integrity_check of %s: %s", path, "; ".join(map(str, result))[:500])
                raise damaged_vault(shown, "vault" if shown != path else "backup")
            done = applied_migrations(conn)
            if not done:
                raise not_a_vault(shown)
            if [name for name in done if name not in {n for n, _ in MIGRATIONS}]:
                raise newer_vault(shown, "vault" if shown != path else "backup")
            return count_contents(conn)
    finally:
        conn.close()


# -- restore ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RestoreReport:
    restored_from: Path
    vault: Path
    previous: Path | None
    counts: VaultCounts

    def as_json(self) -> dict[str, object]:
        return {"restored_from": str(self.restored_from), "vault": str(self.vault),
                "previous": str(self.previous) if self.previous else None, "memories": self.counts.memories,
                "documents": self.counts.documents}


def restore_vault(backup: Path, vault: Path) -> RestoreReport:
    """Replace ``vault`` by a checked copy of ``backup``; the current vault is moved aside."""
    if not backup.is_file():
        raise InvalidInput(f"No backup at {backup}")
    if not vault.parent.is_dir():
        raise VaultUnavailable(f"The vault's folder does not exist: {vault.parent}")
    counts = check_copy(backup, key_for(backup))
    incoming = vault.with_name(vault.name + ".restoring")
    remove_with_side_files(incoming)
    create_private_file(incoming)
    shutil.copyfile(backup, incoming)
    fsync_file(incoming)
    previous = None
    try:
        if vault.exists():
            with exclusive_hold(vault):
                previous = vault.with_name(f"{vault.name}.before-restore-{timestamp()}")
                os.replace(vault, previous)
                for suffix in SIDE_FILES:  # none after the switch out of WAL; kept beside it if any
                    side = Path(str(vault) + suffix)
                    if side.exists():
                        os.replace(side, Path(str(previous) + suffix))
        os.replace(incoming, vault)
    finally:
        remove_with_side_files(incoming)
    fsync_folder(vault.parent)
    return RestoreReport(backup, vault, previous, counts)


@contextlib.contextmanager
def exclusive_hold(vault: Path) -> Iterator[apsw.Connection]:
    """Hold ``vault`` so that no other process has it open, for as long as the block runs.

    In WAL mode every open connection keeps a shared lock on the database; leaving WAL for the
    rollback journal needs the exclusive lock, so it succeeds only when nobody else has the vault
    open, and ``locking_mode=EXCLUSIVE`` keeps that lock until the connection closes.
    """
    conn = open_connection(vault, create=False)
    held = _identity(vault)
    try:
        conn.set_busy_timeout(0)
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            mode = str(scalar(conn, "PRAGMA journal_mode=DELETE")).lower()
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")
        except (apsw.BusyError, apsw.LockedError) as exc:
            raise VaultUnavailable(_HELD.format(vault=vault)) from exc
        if mode != "delete":
            raise VaultUnavailable(_HELD.format(vault=vault))
        try:
            yield conn
        except BaseException:
            _back_to_wal(conn, vault, held)
            raise
    finally:
        conn.close()


def _identity(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino


def _back_to_wal(conn: apsw.Connection, vault: Path, held: tuple[int, int]) -> None:
    """After work that failed: the vault still in its place goes back to WAL before it is let go.

    Out of WAL, a reader that comes while the app reopens the vault (and turns WAL on again) is
    refused as "database is locked"; the vault is left as it was, journal mode included. A file
    that was already replaced is not touched: WAL is then turned on by whoever opens the new one.
    """
    try:
        if not vault.exists() or _identity(vault) != held:
            return
        conn.execute("PRAGMA journal_mode=WAL").fetchall()
    except (OSError, apsw.Error) as exc:  # the failure being raised says what went wrong; this is a log line
        log.warning("The vault %s was left out of WAL mode after a failed change: %s", vault, exc)


_HELD = ("The vault {vault} is open in another program (a Vodou app, `vodou serve`, an MCP client or another "
         "`vodou` command): quit it and try again; nothing was changed.")


# -- files ---------------------------------------------------------------------------------------

def remove_with_side_files(path: Path) -> None:
    for suffix in ("", *SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
