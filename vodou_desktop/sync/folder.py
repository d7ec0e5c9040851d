"""The sync folder's layout. Only file names and whole-file writes; nothing here reads a vault.

    <folder>/vodou/<device id>/device.vsd        who the device is, what it has applied (sealed)
    <folder>/vodou/<device id>/0000000001.vsc    its change files, numbered from 1, append-only
    <folder>/vodou/<device id>/snapshot.vss      its latest snapshot of the whole synced state

Device ids are random (16 hex digits): a name says nothing about the person or the computer. Every file
is written whole under a temporary name that sync engines skip (``.syncthing.*.tmp``), flushed, then
renamed into place, so an engine never ships half a file.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path

DEVICE_ID = re.compile(r"[0-9a-f]{16}")
CHANGE_NAME = re.compile(r"(\d{10})\.vsc")
DEVICE_FILE = "device.vsd"
SNAPSHOT_FILE = "snapshot.vss"
VERSIONS_DIRS = (".stversions",)  # Syncthing's file versioning keeps old copies here


def new_device_id() -> str:
    return secrets.token_hex(8)


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


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` as ``path``: written under a temporary name, flushed, renamed, and the rename flushed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".syncthing.{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
