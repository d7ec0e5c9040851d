"""kill -9 during an apply loses nothing and the next run resumes: the receiving `vodou sync now` is killed
by strace just before its K-th write or flush, for K across the whole run."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from tests.unit.sync.support import connect, make_devices, normalized_export
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (.ci/system-deps.sh)")
PER_FILE = 6
FILES = 3


# what `vodou sync now` runs, without the command line's other modules (a quicker start under strace)
RUN = ("import sys; from vodou_desktop.vault import Vault; from vodou_desktop.sync.engine import SyncEngine\n"
       "with Vault.open(sys.argv[1]) as v: SyncEngine(v).run()")


def _sync_now(vault: Path, inject: str | None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", RUN, str(vault)]
    if inject:
        cmd = ["strace", "-f", "-qq", "-o", os.devnull, "-e", f"inject={inject}"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VODOU_EMBEDDER": "none"})


def _applied(vault: Path, laptop_id: str) -> tuple[int, int]:
    """(memories from the laptop, the laptop's last file recorded as applied), after an integrity check."""
    conn = apsw.Connection(str(vault))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        memories = conn.execute("SELECT count(*) FROM chunks WHERE text LIKE 'laptop %'").fetchone()[0]
        row = conn.execute("SELECT last_seq FROM sync_peers WHERE device_id = ?", (laptop_id,)).fetchone()
        return int(memories), int(row[0]) if row else 0
    finally:
        conn.close()


def test_kill_9_at_any_write_of_an_apply_loses_nothing_and_resumes(tmp_path: Path) -> None:
    laptop, desktop = make_devices(tmp_path, ["laptop", "desktop"])
    connect([laptop, desktop], random.Random(1))
    laptop_id = laptop.device_id
    desktop.vault.close()
    base = _applied(desktop.vault.path, laptop_id)
    for f in range(FILES):
        for k in range(PER_FILE):
            remember(laptop.vault, f"laptop {f}.{k} heron", Origin(kind="cli"))
        laptop.run()
    shutil.copytree(laptop.folder / "vodou" / laptop_id, desktop.folder / "vodou" / laptop_id, dirs_exist_ok=True)

    killed = 0
    # inside the first file's transaction, between two files' commits, at a rename, deep in the last file
    for inject in ("pwrite64:signal=KILL:when=3", "fdatasync:signal=KILL:when=2", "rename:signal=KILL:when=1",
                   "pwrite64:signal=KILL:when=60"):
        result = _sync_now(desktop.vault.path, inject)
        killed += result.returncode != 0
        memories, last = _applied(desktop.vault.path, laptop_id)
        # whole files or nothing: the memories here are exactly those of the files recorded as applied
        assert memories == (last - base[1]) * PER_FILE, (inject, memories, last)
    assert killed >= 2  # the kills did land inside runs
    assert _sync_now(desktop.vault.path, None).returncode == 0
    assert _applied(desktop.vault.path, laptop_id)[0] == FILES * PER_FILE
    with Vault.open(desktop.vault.path) as resumed:
        assert normalized_export(resumed) == normalized_export(laptop.vault)
    laptop.vault.close()
