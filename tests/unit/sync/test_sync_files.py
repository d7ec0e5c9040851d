"""The folder's files: sealed, named without meaning, and anything not ours refused in one line while the
rest carries on."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.unit.sync.support import Device, settle, shuttle
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync import sealing
from vodou_desktop.sync.folder import SyncFolder

CLI = Origin(kind="cli")


def texts(device: Device) -> set[str]:
    return set(device.vault.read(lambda c: [r[0] for r in c.execute("SELECT text FROM chunks")]))


def test_names_and_bytes_leak_no_text_or_names(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    remember(laptop.vault, "heron secret words", CLI)
    settle(trio, random.Random(2))
    for path in (laptop.folder / "vodou").rglob("*"):
        rel = str(path.relative_to(laptop.folder / "vodou"))
        assert re.fullmatch(r"[0-9a-f]{16}(/(\d{10}\.vsc|device\.vsd|snapshot\.vss))?", rel), rel
        if path.is_file():
            data = path.read_bytes()
            assert b"heron" not in data and b"laptop" not in data and b"desktop" not in data


def _damage(path: Path, how: str, other: Path | None = None) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "bit-flipped":
        path.write_bytes(data[:40] + bytes([data[40] ^ 0x04]) + data[41:])


@pytest.mark.parametrize("how", ["truncated", "bit-flipped"])
def test_a_damaged_file_is_refused_in_one_line_and_other_devices_carry_on(trio: list[Device], how: str) -> None:
    laptop, desktop, tablet = trio
    remember(laptop.vault, "from the laptop", CLI)
    remember(desktop.vault, "from the desktop", CLI)
    laptop.run()
    desktop.run()
    shuttle(trio, random.Random(3), share=1.0)
    target = max(SyncFolder(tablet.folder).change_files(laptop.device_id).items())[1]
    _damage(target, how)
    report = tablet.run()
    assert len(report.refused) == 1
    line = report.refused[0]
    assert "\n" not in line and target.name in line and "fails authentication" in line
    assert "from the desktop" in texts(tablet) and "from the laptop" not in texts(tablet)
    shuttle(trio, random.Random(4), share=1.0)  # the engine brings the good copy back
    assert tablet.run().refused == []
    assert "from the laptop" in texts(tablet)


def test_a_foreign_file_and_an_unknown_device_are_refused(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    remember(laptop.vault, "from the laptop", CLI)
    laptop.run()
    shuttle(trio, random.Random(3), share=1.0)
    other = sealing.FolderKeys.from_secret(bytes(32))
    # a file sealed under another key, in the place of the laptop's next change file
    seq = max(SyncFolder(tablet.folder).change_files(laptop.device_id)) + 1
    path = SyncFolder(tablet.folder).change_path(laptop.device_id, seq)
    path.write_bytes(sealing.seal(other, "c", laptop.device_id, seq, {"device": laptop.device_id, "seq": seq,
                                                                       "records": []}))
    # a device folder nobody of this vault wrote
    stranger = SyncFolder(tablet.folder).device_dir("0123456789abcdef")
    stranger.mkdir()
    (stranger / "0000000001.vsc").write_bytes(b"not ours")
    report = tablet.run()
    assert "from the laptop" in texts(tablet)
    assert len(report.refused) == 2
    assert any("fails authentication" in line and path.name in line for line in report.refused)
    assert any("unknown device" in line and "0123456789abcdef" in line for line in report.refused)
    assert tablet.engine.status()["problems"] == report.refused


def test_a_replayed_old_file_is_refused(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    remember(laptop.vault, "first", CLI)
    laptop.run()
    remember(laptop.vault, "second", CLI)
    laptop.run()
    shuttle(trio, random.Random(3), share=1.0)
    tablet.run()
    files = SyncFolder(tablet.folder).change_files(laptop.device_id)
    newest, older = max(files), max(files) - 1
    files[newest].write_bytes(files[older].read_bytes())  # an old file under a number already applied
    report = tablet.run()
    assert report.refused and "fails authentication" in report.refused[0]  # the number is sealed in
    # the same number with other content sealed by the laptop: a restored older generation
    laptop_files = SyncFolder(laptop.folder).change_files(laptop.device_id)
    old_bytes = laptop_files[newest].read_bytes()
    files[newest].write_bytes(old_bytes)
    assert tablet.run().refused == []  # the very file it applied is fine
    payload = sealing.unseal(sealing.FolderKeys.from_secret(bytes(range(32))), "c", laptop.device_id, newest,
                             old_bytes)
    payload["records"] = []
    files[newest].write_bytes(sealing.seal(sealing.FolderKeys.from_secret(bytes(range(32))), "c",
                                           laptop.device_id, newest, payload))
    report = tablet.run()
    assert len(report.refused) == 1 and "repeats sequence number" in report.refused[0]


def test_syncthing_versioning_folder_is_reported(trio: list[Device]) -> None:
    laptop = trio[0]
    (laptop.folder / ".stversions").mkdir()
    report = laptop.run()
    assert any("versioning" in w and ".stversions" in w for w in report.warnings)
    assert laptop.engine.status()["versioning"]
