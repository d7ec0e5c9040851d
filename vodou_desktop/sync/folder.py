"""The sync folder's layout. Only file names and whole-file writes; nothing here reads a vault.

    <folder>/vodou/<device id>/device.vsd        who the device is, what it has applied (sealed)
    <folder>/vodou/<device id>/0000000001.vsc    its change files, numbered from 1, append-only
    <folder>/vodou/<device id>/snapshot.vss      its latest snapshot of the whole synced state

Device ids are random (16 hex digits): a name says nothing about the person or the computer. Every file
is written whole under a temporary name that sync engines skip (``.syncthing.*.tmp``), flushed, then
renamed into place, so an engine never ships half a file.

The folder itself is the person's (or the sync engine's): a run never creates it. When it is gone (an
unmounted drive, a folder moved) the run stops in one line rather than write into an empty folder at the
old place or under a mount point. Only ``vodou/`` and this device's own folder are made, and only while
the folder is there. Every file is measured before it is read (``read_bounded``): anyone who can write
into the folder can put a file there, key or not.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from pathlib import Path

from vodou_desktop.errors import KnownError

DEVICE_ID = re.compile(r"[0-9a-f]{16}", re.ASCII)
CHANGE_NAME = re.compile(r"([0-9]{10})\.vsc", re.ASCII)  # ASCII digits only: "٠٠…٣" is not a number here
DEVICE_FILE = "device.vsd"
SNAPSHOT_FILE = "snapshot.vss"
VERSIONS_DIRS = (".stversions",)  # Syncthing's file versioning keeps old copies here
MIB = 1 << 20
DEVICE_LIMIT = 1 * MIB  # a device record: a name and a few numbers per device
CHANGE_LIMIT = 32 * MIB  # a change file (the writer keeps them far smaller: ``CHANGE_TARGET``)
SNAPSHOT_FLOOR = 32 * MIB  # a snapshot, at least; more for a large vault (``snapshot_limit``)


class FolderGone(KnownError):
    """The sync folder is not there (any more)."""


class TooLarge(Exception):
    """A file over the size it may have: refused without being read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"is {_mib(size)}, over the {_mib(limit)} a file of its kind may have; it was not read")


def _mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n} bytes"


def new_device_id() -> str:
    return secrets.token_hex(8)


def snapshot_limit(declared: int | None, vault_bytes: int) -> int:
    """How large a snapshot may be before it is refused unread: the floor, the size its own (sealed,
    authentic) device record declares, or twice this vault's file, whichever is largest."""
    return max(SNAPSHOT_FLOOR, int(declared or 0) + MIB, 2 * vault_bytes)


class SyncFolder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / "vodou"

    def device_dir(self, device: str) -> Path:
        return self.base / device

    def change_path(self, device: str, seq: int) -> Path:
        return self.device_dir(device) / f"{seq:010d}.vsc"

    def device_file(self, device: str) -> Path:
        return self.device_dir(device) / DEVICE_FILE

    def snapshot_file(self, device: str) -> Path:
        return self.device_dir(device) / SNAPSHOT_FILE

    def require(self) -> None:
        if not self.root.is_dir():
            raise FolderGone(f"The sync folder {self.root} is not there (unmounted drive, or moved?); nothing more "
                             "was synced, and nothing was created in its place.")

    def ensure_device_dir(self, device: str) -> Path:
        """This device's own folder, made if missing while the sync folder itself is there."""
        self.require()
        folder = self.device_dir(device)
        try:
            self.base.mkdir(exist_ok=True, mode=0o700)
            folder.mkdir(exist_ok=True, mode=0o700)
        except FileNotFoundError:
            self.require()
            raise
        except OSError as exc:
            raise written_error(exc, folder) from exc
        return folder

    def entries(self) -> list[str]:
        """Every folder name under ``vodou/`` (device ids, or things that are not ours)."""
        if not self.base.is_dir():
            return []
        return sorted(p.name for p in self.base.iterdir() if p.is_dir() and not p.name.startswith("."))

    def change_files(self, device: str) -> dict[int, Path]:
        folder = self.device_dir(device)
        if not folder.is_dir():
            return {}
        out: dict[int, Path] = {}
        for path in folder.iterdir():
            match = CHANGE_NAME.fullmatch(path.name)
            if match:
                out[int(match.group(1))] = path
        return out

    def versioning_folders(self) -> list[Path]:
        """Old copies an engine keeps (Syncthing's ``.stversions``): erased text could survive there."""
        return [self.root / name for name in VERSIONS_DIRS if (self.root / name).exists()]


def read_bounded(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` (None when it is not there); ``TooLarge`` when it is over ``limit``, measured
    on the open file before anything is read (and a file that grows while read is refused the same)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise TooLarge(size, limit)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TooLarge(len(data), limit)
    return data


def written_error(exc: OSError, path: Path) -> KnownError:
    """One line for a write into the sync folder that the environment refused."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return KnownError(f"The disk holding the sync folder is full: {path.name} could not be written; nothing "
                          "was lost (this vault keeps the changes and sends them once there is room).")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return KnownError(f"The sync folder cannot be written here ({exc.strerror}): {path.parent}; nothing was "
                          "lost.")
    return KnownError(f"Writing {path.name} into the sync folder failed ({exc.strerror or exc}); nothing was lost.")


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` as ``path``: written under a temporary name, flushed, renamed once into place, and the rename
    flushed. The folder must be there already (``ensure_device_dir``): nothing above it is ever made."""
    tmp = path.with_name(f".syncthing.{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except FileNotFoundError:
        SyncFolder(path.parent.parent.parent).require()
        raise
    except OSError as exc:
        raise written_error(exc, path) from exc
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise written_error(exc, path) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
