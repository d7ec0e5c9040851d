"""Sync test fixtures: three computers of one person, set up on one sync folder."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.sync.support import Device, connect, make_devices


@pytest.fixture
def trio(tmp_path: Path) -> Iterator[list[Device]]:
    """Laptop, desktop and tablet, each joined and in step (test_sync_merge sets up its own, not yet
    connected)."""
    devices = make_devices(tmp_path, ["laptop", "desktop", "tablet"])
    connect(devices, random.Random(1))
    yield devices
    for d in devices:
        d.vault.close()
