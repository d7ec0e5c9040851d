"""Sync in the background: a file arriving in the folder, or a change in this vault, starts a run on the
sync thread; the caller never waits. Waits are bounded loops, never timing assertions."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.unit.sync.support import Device, connect, make_devices, shuttle
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync.background import BackgroundSync, SyncState
from vodou_desktop.sync.folder import SyncFolder
from vodou_desktop.vault import Vault


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[list[Device]]:
    devices = make_devices(tmp_path, ["laptop", "desktop"])
    connect(devices, random.Random(1))
    yield devices
    for d in devices:
        d.vault.close()


def until(check: Callable[[], bool], limit: float = 30.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


def has(vault: Vault, text: str) -> bool:
    return bool(vault.read(lambda c: c.execute("SELECT 1 FROM chunks WHERE text = ?", (text,)).fetchone()))


def test_arriving_files_and_local_changes_start_runs_on_the_sync_thread(pair: list[Device]) -> None:
    laptop, desktop = pair
    states: list[SyncState] = []
    threads: set[str] = set()

    def seen(state: SyncState) -> None:
        states.append(state)
        threads.add(threading.current_thread().name)

    background = BackgroundSync(desktop.vault, on_state=seen, poll_s=3600)
    assert background.start()
    try:
        assert until(lambda: background.state.state == "synced")
        remember(laptop.vault, "arrived by the folder", Origin(kind="cli"))
        laptop.run()
        shuttle(pair, random.Random(2), share=1.0)  # the engine delivers: a file event on the desktop's folder
        assert until(lambda: has(desktop.vault, "arrived by the folder"))
        before = set(SyncFolder(desktop.folder).change_files(desktop.device_id))
        remember(desktop.vault, "written on the desktop", Origin(kind="cli"))  # a local change: sent by itself
        assert until(lambda: set(SyncFolder(desktop.folder).change_files(desktop.device_id)) != before)
    finally:
        background.stop()
    assert threads == {"vodou-sync"}
    assert {s.state for s in states} >= {"syncing", "synced"}


def test_paused_and_not_set_up_states(pair: list[Device], tmp_path: Path) -> None:
    laptop, desktop = pair
    desktop.engine.set_paused(True)
    background = BackgroundSync(desktop.vault, poll_s=3600)
    background.start()
    try:
        assert until(lambda: background.state.state == "paused")
    finally:
        background.stop()
    with Vault.open(tmp_path / "lonely.sqlite") as lonely:
        alone = BackgroundSync(lonely)
        assert alone.start() is False and alone.state.state == "off"
        assert alone.state.words() == "Sync: off — not set up"
