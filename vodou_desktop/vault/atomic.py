"""Crash-safe file operations: the one pattern every operation on the person's files goes through.

A file Vodou writes (a backup, its manifest, a converted vault, a restored vault, an export, a
recovery key file) is written under a temporary name in the same folder (``NAME.partial``), its
data flushed to disk (``fsync``), renamed into place, and the folder flushed, so that after a
crash the final name holds either the old file or the whole new one, never a piece of it. While a
temporary file is being written its writer holds a lock on it (``flock``), so a temporary whose
lock is free is known to be left over from a killed process and is removed (``remove_stale``).

Operations that move the vault itself (restore, encrypt, decrypt) also keep a journal beside it
(``VAULT.operation``, locked for as long as the operation runs) saying what they are doing. The
next process that opens the vault for writing (any ``vodou`` command, the app, ``vodou serve``)
calls ``finish_interrupted``: a journal whose lock is free was left by a killed operation, which is
then finished or rolled back, and one line says which. A vault path that is missing while copies
of it lie beside it is never replaced by a new empty vault (``refuse_to_replace``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from vodou_desktop.errors import InvalidInput, VaultUnavailable

try:
    import fcntl
except ImportError:  # pragma: no cover - not a POSIX system: no locks, leftovers are kept, never removed
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

TEMPORARY = ".partial"
JOURNAL = ".operation"
RESTORING = ".restoring"
WORK_COPIES = (RESTORING, ".encrypting", ".decrypting")  # a vault's own working copies, beside it
SIDE_FILES = ("-wal", "-shm", "-journal")


# -- flushing --------------------------------------------------------------------------------------

def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: Path) -> None:
    """The folder's entries (a rename, a new or removed name) made durable."""
    fsync_file(folder)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# -- locks ---------------------------------------------------------------------------------------

def _try_lock(fd: int) -> bool:
    if fcntl is None:  # pragma: no cover
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def is_stale(path: Path) -> bool:
    """True when nobody holds ``path``'s lock: a temporary or journal left by a killed process."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        return _try_lock(fd)
    finally:
        os.close(fd)


def remove_with_side_files(path: Path) -> None:
    for suffix in ("", *SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()


def remove_stale(folder: Path, prefix: str = "") -> list[Path]:
    """Remove every temporary file (``PREFIX*.partial``) in ``folder`` that no live process is writing."""
    if not folder.is_dir():
        return []
    gone = []
    for path in sorted(p for p in folder.glob(f"*{TEMPORARY}") if p.name.startswith(prefix)):
        if is_stale(path):
            remove_with_side_files(path)
            gone.append(path)
    if gone:
        fsync_folder(folder)
    return gone


# -- writing ---------------------------------------------------------------------------------------

def temporary_for(dest: Path) -> Path:
    return dest.with_name(dest.name + TEMPORARY)


@contextlib.contextmanager
def new_file(dest: Path, *, replace: bool = False, what: str = "") -> Iterator[Path]:
    """Yield an empty private (0600) temporary file beside ``dest`` for the caller to fill; when the
    block ends normally it is flushed and renamed to ``dest`` (which must not exist unless
    ``replace``), and the folder is flushed. On an error the temporary file is removed; an OS error
    (a full disk, a folder gone) becomes one line naming ``what`` is written ("the export") and
    ``dest``."""
    named = f"{what} {dest}" if what else str(dest)
    if not replace and dest.exists():
        raise InvalidInput(f"{dest} already exists; choose another name (it is never overwritten)")
    if not dest.parent.is_dir():
        raise InvalidInput(f"The folder does not exist: {dest.parent}")
    temp = temporary_for(dest)
    if temp.exists():
        if not is_stale(temp):
            raise VaultUnavailable(f"{dest} is being written by another process right now; try again when it is done.")
        remove_with_side_files(temp)
    try:
        fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise VaultUnavailable(f"Could not write {named}: {exc.strerror or exc}; nothing was written") from exc
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        _try_lock(fd)  # held until the file has its final name: while held, nobody takes it for a leftover
        try:
            yield temp
            os.fsync(fd)
            if not replace and dest.exists():
                raise InvalidInput(f"{dest} appeared while it was being written; it was left as it is")
            os.replace(temp, dest)
            fsync_folder(dest.parent)
        except BaseException as exc:
            remove_with_side_files(temp)
            if isinstance(exc, OSError):  # a full disk, a folder gone: one line, and nothing left half written
                raise VaultUnavailable(f"Could not write {named}: {exc.strerror or exc}; nothing was written") from exc
            raise
    finally:
        os.close(fd)


def write_text(dest: Path, text: str, *, replace: bool = False) -> Path:
    with new_file(dest, replace=replace) as temp:
        temp.write_text(text, encoding="utf-8")
    return dest


@contextlib.contextmanager
def open_new(dest: Path, *, replace: bool = False, what: str = "") -> Iterator[IO[str]]:
    """A text stream whose contents take the name ``dest`` only once all of them are on disk."""
    with new_file(dest, replace=replace, what=what) as temp, temp.open("w", encoding="utf-8") as out:
        yield out
        out.flush()


def copy_file(source: Path, dest: Path, *, replace: bool = False) -> Path:
    """A flushed copy of ``source`` under ``dest``, which holds the old file or the whole copy."""
    with new_file(dest, replace=replace) as temp:
        shutil.copyfile(source, temp)
    return dest


def move(source: Path, dest: Path) -> None:
    """Rename ``source`` to ``dest`` (replacing it) and flush the folder, so the rename survives."""
    os.replace(source, dest)
    fsync_folder(dest.parent)


# -- the journal of an operation on the vault ---------------------------------------------------

def journal_path(vault: Path) -> Path:
    return vault.with_name(vault.name + JOURNAL)


class Journal:
    """The lock and the record of one operation on the vault file (restore, encrypt, decrypt).

    ``Journal.hold(vault)`` waits a moment for another holder, then refuses. While held, no other
    process starts an operation on the vault, nor takes its working copies for leftovers.
    """

    def __init__(self, vault: Path, fd: int) -> None:
        self.vault, self.path, self._fd = vault, journal_path(vault), fd

    @classmethod
    @contextlib.contextmanager
    def hold(cls, vault: Path, *, wait: float = 3.0) -> Iterator[Journal]:
        journal = cls._acquire(vault, wait)
        if journal is None:
            raise VaultUnavailable(f"Another Vodou process is restoring, encrypting or decrypting {vault} right "
                                   "now; try again when it is done. Nothing was changed.")
        try:
            yield journal
        finally:
            journal._release()

    @classmethod
    def _acquire(cls, vault: Path, wait: float) -> Journal | None:
        path = journal_path(vault)
        deadline = time.monotonic() + wait
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            if _try_lock(fd) and _same_file(fd, path):
                return cls(vault, fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def read(self) -> dict[str, Any] | None:
        """What the last holder recorded (``None``: nothing, or a record cut short by a crash, which
        is written before anything is moved, so nothing was)."""
        os.lseek(self._fd, 0, os.SEEK_SET)
        raw = b""
        while chunk := os.read(self._fd, 65536):
            raw += chunk
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def record(self, **facts: Any) -> None:
        """Write down what is about to happen, flushed before the caller moves anything."""
        data = json.dumps(facts).encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)
        fsync_folder(self.path.parent)

    def _release(self) -> None:
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            fsync_folder(self.path.parent)
        finally:
            os.close(self._fd)


# -- after a crash ---------------------------------------------------------------------------------

def finish_interrupted(vault: Path) -> list[str]:
    """Finish or roll back an operation on ``vault`` that a killed process left half done, and
    remove its stale working copies; returns (and logs) one line per thing done. Does nothing while
    another process is running an operation, or where the folder cannot be written."""
    if not vault.parent.is_dir() or not os.access(vault.parent, os.W_OK):
        return []
    if not journal_path(vault).exists() and not _work_copies(vault) and not _temporaries_beside(vault):
        return []
    try:
        journal = Journal._acquire(vault, wait=0)
    except OSError:
        return []
    if journal is None:
        return []
    done: list[str] = []
    try:
        record = journal.read()
        if record is not None:
            done.append(_finish(vault, record))
        if vault.exists():  # with no operation running, a working copy beside a vault is a leftover
            for copy in _work_copies(vault):
                remove_with_side_files(copy)
                done.append(f"removed {copy.name}, a working copy left by an interrupted operation "
                            "(the vault itself is complete)")
        for temp in remove_stale(vault.parent, prefix=vault.name) if _temporaries_beside(vault) else []:
            done.append(f"removed {temp.name}, a file left half written by an interrupted operation")
    finally:
        journal._release()
    for line in done:
        log.warning("%s", line)
    return done


def _finish(vault: Path, record: dict[str, Any]) -> str:
    op = str(record.get("op"))
    if op == "restore":
        previous = Path(record["previous"]) if record.get("previous") else None  # None: there was no vault
        return _finish_restore(vault, Path(record["incoming"]), previous, record)
    work = Path(record.get("work", ""))
    if work.name and work.exists():  # the vault was not switched yet: it is as it was
        remove_with_side_files(work)
        return f"an interrupted `vodou {op}` was rolled back: the vault is as it was; run it again"
    if op == "encrypt":
        return ("an interrupted `vodou encrypt` had already encrypted the vault; run `vodou encrypt` again to "
                "finish encrypting its backups")
    return f"an interrupted `vodou {op}` had already switched the vault; nothing was left to do"


def _finish_restore(vault: Path, incoming: Path, previous: Path | None, record: dict[str, Any]) -> str:
    backup = record.get("backup", "a backup")
    kept = f"; the previous vault is kept as {previous}" if previous is not None else ""
    if vault.exists():
        if incoming.exists():  # the vault was never moved aside
            remove_with_side_files(incoming)
            return f"an interrupted restore of {backup} was rolled back: the vault is as it was"
        if previous is None or previous.exists():
            return f"an interrupted restore of {backup} had finished{kept}"
        return f"an interrupted restore of {backup} had not started; the vault is as it was"
    if incoming.exists() and sha256_of(incoming) == record.get("sha256"):
        move(incoming, vault)
        return f"finished an interrupted restore of {backup}{kept}"
    if previous is not None and previous.exists():
        for suffix in ("", *SIDE_FILES):
            if Path(str(previous) + suffix).exists():
                os.replace(Path(str(previous) + suffix), Path(str(vault) + suffix))
        fsync_folder(vault.parent)
        remove_with_side_files(incoming)
        return f"an interrupted restore of {backup} was rolled back: the vault was put back from {previous.name}"
    return f"an interrupted restore of {backup} left no vault at {vault} and no copy to put back"


def _work_copies(vault: Path) -> list[Path]:
    return [p for p in (vault.with_name(vault.name + s) for s in WORK_COPIES) if p.exists()]


def _temporaries_beside(vault: Path) -> bool:
    return any(vault.parent.glob(f"{vault.name}*{TEMPORARY}"))


def copies_beside(vault: Path) -> list[Path]:
    """Files beside ``vault`` that hold a copy of it: working copies and ``before-restore`` copies."""
    if not vault.parent.is_dir():
        return []
    found = [p for p in vault.parent.iterdir() if p.name.startswith(f"{vault.name}.before-")
             and not p.name.endswith(SIDE_FILES + (TEMPORARY,))]
    return sorted(_work_copies(vault) + found)


def refuse_to_replace(vault: Path) -> None:
    """Before a new vault is created at ``vault``: refuse when copies of a vault lie beside it (it was
    there a moment ago; an empty one must not take its place)."""
    finish_interrupted(vault)
    if vault.exists():
        return
    copies = copies_beside(vault)
    if journal_path(vault).exists() and not is_stale(journal_path(vault)):
        raise VaultUnavailable(f"The vault {vault} is being restored, encrypted or decrypted by another Vodou "
                               "process; try again when it is done.")
    if copies:
        newest = max(copies, key=lambda p: p.stat().st_mtime)
        raise VaultUnavailable(
            f"No vault at {vault}, but {len(copies)} copies of one are beside it (newest: {newest.name}); a new "
            f"empty vault was not created. Put one back with `vodou restore {newest}`, or move them to "
            "another folder to start an empty vault.")
