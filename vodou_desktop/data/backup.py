"""Whole-vault backup and restore (DATA-1).

A backup is SQLite's online backup of the vault into a new single file, taken in one step so that
it is one consistent snapshot even while the app, the bridge or the CLI keep writing (WAL lets the
copy read while they write). The copy is checked with ``integrity_check`` before it gets its final
name. An encrypted vault gives an encrypted backup, under the same key.

Each backup carries a manifest beside it (``NAME.manifest``: the file's SHA-256, what it holds, the
schema and Vodou versions, encrypted or not). ``verify_backup`` checks a backup against its manifest
and runs ``integrity_check`` and FTS5's own check of the full-text index; ``vodou backup --verify``
and every restore run it, so a backup changed by one bit after it was made is refused.

A restore verifies the copy, makes sure no other process has the vault open, moves the current
vault aside (never deleted) and puts a copy of the backup in its place. Every file is written
through ``vault.atomic`` (temporary name, flushed, renamed); the restore's two renames are recorded
in the vault's journal first, so a restore killed between them is finished (or rolled back) by the
next process that opens the vault.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import apsw

from vodou_desktop import __version__
from vodou_desktop.errors import InvalidInput, VaultUnavailable, damaged_vault, newer_vault, not_a_vault
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, schema_objects
from vodou_desktop.vault import query as q
from vodou_desktop.vault.atomic import (
    RESTORING,
    Journal,
    finish_interrupted,
    fsync_file,
    move,
    new_file,
    remove_stale,
    remove_with_side_files,
    sha256_of,
    temporary_for,
    write_text,
)
from vodou_desktop.vault.cipher import apply_key, is_encrypted, key_for, rekey
from vodou_desktop.vault.connection import create_private_file, open_connection, scalar, translate_errors
from vodou_desktop.vault.migrations import applied_migrations
from vodou_desktop.vault.schema import MIGRATIONS
from vodou_desktop.words import plural

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (pages done, pages in all)
MANIFEST = ".manifest"
MANIFEST_FORMAT = "vodou-backup-manifest"


@dataclass(frozen=True)
class VaultCounts:
    memories: int
    forgotten: int
    documents: int
    operator_memories: int

    def sentence(self) -> str:
        return (f"{plural(self.memories, 'memory')} ({self.forgotten} forgotten), "
                f"{plural(self.documents, 'Library page')}, {plural(self.operator_memories, 'operator memory')}")


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


def free_name(folder: Path, name: str) -> Path:
    """``folder / name``, or ``name-2``, ``name-3``… when taken (two backups within one second)."""
    path, n = folder / name, 1
    while path.exists() or manifest_path(path).exists():
        n += 1
        path = folder / f"{name}-{n}"
    return path


def count_contents(conn: apsw.Connection) -> VaultCounts:
    every = FactFilter(project=ALL_PROJECTS, include_forgotten=True)
    live = FactFilter(project=ALL_PROJECTS)
    total = q.count_facts(conn, every)
    return VaultCounts(memories=total, forgotten=total - q.count_facts(conn, live),
                       documents=q.count_documents(conn, every),
                       operator_memories=int(scalar(conn, "SELECT count(*) FROM operator_memory")))


def backup_vault(vault: Path, dest: Path, *, progress: Progress | None = None) -> BackupReport:
    """Copy ``vault`` into ``dest`` (must not exist), check the copy and write its manifest; an
    encrypted vault gives a copy encrypted with the same key."""
    if dest.exists():
        raise InvalidInput(f"{dest} already exists; choose another name (a backup never overwrites)")
    if not dest.parent.is_dir():
        raise InvalidInput(f"The backup folder does not exist: {dest.parent}")
    remove_leftovers(dest.parent, f"{vault.name}.")  # what an earlier, killed backup left half done
    finish_interrupted(vault)  # a restore or conversion killed midway is finished before the vault is read
    source = open_connection(vault, create=False)
    dest_key = key_for(vault)
    try:
        with new_file(dest) as partial:
            try:
                with translate_errors(vault):
                    _copy(source, partial, dest_key, progress)
            except VaultUnavailable as exc:
                if not isinstance(exc.__cause__, (apsw.FullError, apsw.IOError)):
                    raise
                why = "the disk is full" if isinstance(exc.__cause__, apsw.FullError) else "it could not be written"
                raise VaultUnavailable(f"The backup was not made: {why} at {dest}; nothing was left there and the "
                                       "vault is unchanged.") from exc
            counts = check_copy(partial, dest_key, shown=vault)
            # The manifest takes its name first: a backup never stands without one (a manifest left
            # without its backup by a crash is removed by the next backup).
            write_manifest(dest, counts, encrypted=dest_key is not None, key=dest_key, contents=partial)
    except BaseException as exc:
        if not dest.exists():  # the manifest of a backup that never took its name
            manifest_path(dest).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # a full disk, a folder gone: one line, nothing left behind
            raise VaultUnavailable(f"The backup was not made: {exc.strerror or exc}; nothing was left at "
                                   f"{dest}.") from exc
        raise
    finally:
        source.close()
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
    """Integrity of a copy (SQLite's ``integrity_check`` and FTS5's check of the full-text index)
    and what it holds; refuses a non-vault, a newer schema and schema objects the migrations do not
    make (``schema_objects``). Every refusal is one line, naming
    ``shown`` (the vault a fresh copy was taken from) or else ``path``."""
    shown = shown or path
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        with translate_errors(shown):
            if key is not None:
                apply_key(conn, key)
            result = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(5)")]
            if result != ["ok"]:
                log.info("integrity_check of %s: %s", path, "; ".join(result)[:500])
                raise _damaged(shown, path, "it fails SQLite's integrity check")
            done = applied_migrations(conn)
            if not done:
                raise not_a_vault(shown)
            if [name for name in done if name not in {n for n, _ in MIGRATIONS}]:
                raise newer_vault(shown, "vault" if shown != path else "copy")
            # a trigger, table or view of its own would run inside the vault's statements (and outlive an erase)
            schema_objects.refuse_foreign(conn, shown, done, what="vault" if shown != path else "copy",
                                          outcome="it was not used and nothing was changed")
            counts = count_contents(conn)
    finally:
        conn.close()
    _check_full_text(path, key, shown)
    return counts


def _damaged(shown: Path, path: Path, found: str) -> VaultUnavailable:
    """A copy names the check it failed; a vault (a fresh copy of it failed) is damaged in the same
    words as everywhere else."""
    return damaged_vault(shown, "copy", found=found) if shown == path else damaged_vault(shown)


def _check_full_text(path: Path, key: str | None, shown: Path) -> None:
    """FTS5's ``integrity-check`` of the index against the memories' text: a bit flipped in a
    memory passes SQLite's check but not this one. FTS5 takes the command as an INSERT, so the
    connection may write, although the check changes nothing in the file."""
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.CantOpenError:  # a read-only file: SQLite's own check above has to do
        log.info("%s is read-only: its full-text index was not checked", path)
        return
    try:
        with translate_errors(path):
            if key is not None:
                apply_key(conn, key)
            try:
                conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
            except (apsw.CorruptError, apsw.SQLError) as exc:
                log.info("FTS5 integrity-check of %s: %s", path, exc)
                raise _damaged(shown, path, "its memories differ from what its full-text index holds") from exc
            except apsw.ReadOnlyError:
                log.info("%s is read-only: its full-text index was not checked", path)
    finally:
        conn.close()


def remove_leftovers(folder: Path, prefix: str) -> list[Path]:
    """Remove half-written backups no process is writing, and manifests whose backup never took its
    name; returns the half-written backups removed."""
    gone = remove_stale(folder, prefix=prefix)
    for manifest in folder.glob(f"{prefix}*{MANIFEST}"):
        made = manifest.with_name(manifest.name.removesuffix(MANIFEST))
        if not made.exists() and not temporary_for(made).exists():
            manifest.unlink(missing_ok=True)
    return gone


# -- manifests -----------------------------------------------------------------------------------

def manifest_path(backup: Path) -> Path:
    return backup.with_name(backup.name + MANIFEST)


def schema_step(path: Path, key: str | None) -> str | None:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        with translate_errors(path):
            if key is not None:
                apply_key(conn, key)
            done = applied_migrations(conn)
    finally:
        conn.close()
    return done[-1] if done else None


def write_manifest(backup: Path, counts: VaultCounts, *, encrypted: bool, key: str | None = None,
                   contents: Path | None = None) -> Path:
    """What ``backup`` is, beside it: its SHA-256, what it holds, the schema and Vodou versions
    (``key``: the backup's, when known; else found as for the vault; ``contents``: the file that
    will take the name ``backup``, when it does not have it yet)."""
    source = contents or backup
    schema = schema_step(source, key if key is not None or not encrypted else key_for(source))
    data = {"format": MANIFEST_FORMAT, "version": 1, "file": backup.name, "sha256": sha256_of(source),
            "size": source.stat().st_size, "memories": counts.memories, "forgotten": counts.forgotten,
            "documents": counts.documents, "operator_memories": counts.operator_memories,
            "schema": schema, "vodou": __version__, "encrypted": encrypted,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds")}
    return write_text(manifest_path(backup), json.dumps(data, indent=1) + "\n", replace=True)


def read_manifest(backup: Path) -> dict[str, object] | None:
    path = manifest_path(backup)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise VaultUnavailable(f"The manifest {path.name} of the backup cannot be read ({exc}); the backup was "
                               "not used.") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise VaultUnavailable(f"{path.name} is not a Vodou backup manifest; the backup was not used.")
    return data


def missing_manifest(backup: Path) -> str:
    """The words for a backup without its manifest: named, never passed over in silence."""
    return (f"{manifest_path(backup).name} is missing: nothing says what the file held when it was made, so only "
            "its own checks vouch for it")


@dataclass(frozen=True)
class Verification:
    path: Path
    counts: VaultCounts
    encrypted: bool
    sha256: str
    manifest: dict[str, object] | None

    def sentence(self) -> str:
        lock = "encrypted" if self.encrypted else "not encrypted"
        checked = "matches its manifest, " if self.manifest else f"has no manifest ({missing_manifest(self.path)}), "
        return (f"{self.path} {checked}passes SQLite's integrity check and the full-text index check "
                f"({lock}): {self.counts.sentence()}")

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "ok": True, "encrypted": self.encrypted, "sha256": self.sha256,
                "manifest": self.manifest is not None, "memories": self.counts.memories,
                "documents": self.counts.documents}


def verify_backup(path: Path, key: str | None = None) -> Verification:
    """Check ``path`` against its manifest (SHA-256, memory count) and run the integrity checks;
    ``VaultUnavailable`` in one line on any mismatch. ``key``: found as for the vault if not given."""
    if not path.is_file():
        raise InvalidInput(f"No backup at {path}")
    manifest = read_manifest(path)
    digest = sha256_of(path)
    if manifest is not None and manifest.get("sha256") != digest:
        raise VaultUnavailable(f"The backup {path} does not match its manifest (its SHA-256 differs): it was "
                               "changed or damaged after it was made; it was not used.")
    counts = check_copy(path, key if key is not None else key_for(path))
    if manifest is not None and manifest.get("memories") != counts.memories:
        raise VaultUnavailable(f"The backup {path} holds {plural(counts.memories, 'memory')} where its manifest says "
                               f"{manifest.get('memories')}; it was not used.")
    return Verification(path, counts, key_for(path) is not None, digest, manifest)


# -- restore ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RestoreReport:
    restored_from: Path
    vault: Path
    previous: Path | None
    counts: VaultCounts
    encrypted: bool = False  # the vault, after the restore
    was_encrypted: bool = False  # the vault, before it
    manifest: bool = True  # the backup had its manifest (else the report names it as missing)

    def as_json(self) -> dict[str, object]:
        return {"restored_from": str(self.restored_from), "vault": str(self.vault),
                "previous": str(self.previous) if self.previous else None, "memories": self.counts.memories,
                "documents": self.counts.documents, "encrypted": self.encrypted, "manifest": self.manifest}

    def manifest_sentence(self) -> str:
        if self.manifest:
            return ""
        return f"note: {self.restored_from.name} has no manifest ({missing_manifest(self.restored_from)})"

    def encryption_sentence(self) -> str:
        """What became of encryption at rest, when the restore changed it or kept it against the backup."""
        if self.was_encrypted and not self.encrypted:
            return ("The vault is NOT encrypted any more: the backup was a plain file. Run `vodou encrypt` to "
                    "encrypt it again.")
        if self.encrypted and not self.was_encrypted and self.previous is not None:
            return "The vault is encrypted now, as the backup was (the same key opens it)."
        return ""


def plain_over_encrypted(backup: Path, vault: Path) -> bool:
    """Restoring ``backup`` would put a plain file where an encrypted vault is: ask first."""
    return vault.exists() and is_encrypted(vault) and not is_encrypted(backup)


def restore_vault(backup: Path, vault: Path, *, encrypt_with: str | None = None) -> RestoreReport:
    """Replace ``vault`` by a verified copy of ``backup``; the current vault is moved aside.
    ``encrypt_with``: encrypt the copy with this key before it takes the vault's place (a plain
    backup restored where an encrypted vault was, kept encrypted)."""
    if not vault.parent.is_dir():
        raise VaultUnavailable(f"The vault's folder does not exist: {vault.parent}")
    checked = verify_backup(backup)
    finish_interrupted(vault)
    was_encrypted = vault.exists() and is_encrypted(vault)
    incoming = vault.with_name(vault.name + RESTORING)
    with Journal.hold(vault) as journal:
        remove_with_side_files(incoming)
        try:
            create_private_file(incoming)
            shutil.copyfile(backup, incoming)
            if sha256_of(incoming) != checked.sha256:
                raise VaultUnavailable(f"The backup {backup} changed while it was being copied; nothing was changed.")
            if encrypt_with is not None and not checked.encrypted:
                _encrypt_copy(incoming, encrypt_with)
            fsync_file(incoming)
        except BaseException as exc:
            remove_with_side_files(incoming)
            if isinstance(exc, OSError):
                raise VaultUnavailable(f"The vault was not restored: {exc.strerror or exc}; it was left as it "
                                       "was.") from exc
            raise
        previous = vault.with_name(f"{vault.name}.before-restore-{timestamp()}") if vault.exists() else None
        journal.record(op="restore", backup=str(backup), incoming=str(incoming),
                       previous=str(previous or ""), sha256=sha256_of(incoming))
        try:
            if previous is not None:
                with exclusive_hold(vault):
                    os.replace(vault, previous)
                    # After the switch out of WAL there is no -wal or -shm; the rollback journal that
                    # exclusive mode keeps after its commit is not hot (header zeroed): it goes.
                    Path(str(vault) + "-journal").unlink(missing_ok=True)
                    for suffix in ("-wal", "-shm"):
                        side = Path(str(vault) + suffix)
                        if side.exists():
                            os.replace(side, Path(str(previous) + suffix))
                    move(incoming, vault)
            else:
                move(incoming, vault)
        except BaseException:
            if not vault.exists() and previous is not None and previous.exists():
                move(previous, vault)  # moved aside, then refused: put back
            if vault.exists():  # the vault is as it was
                remove_with_side_files(incoming)
            raise
    return RestoreReport(backup, vault, previous, checked.counts, encrypted=is_encrypted(vault),
                         was_encrypted=was_encrypted, manifest=checked.manifest is not None)


def _encrypt_copy(path: Path, key: str) -> None:
    conn = apsw.Connection(str(path))
    try:
        with translate_errors(path):
            conn.execute("PRAGMA journal_mode=DELETE")
            rekey(conn, key)
    finally:
        conn.close()
    check_copy(path, key)


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
