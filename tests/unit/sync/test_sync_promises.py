"""Sync keeps what one computer promises: a restore, an undo, an erase, a pin and a Library document end the
same on every computer as they would on one, and nothing erased stays anywhere this computer keeps."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.sync.support import (
    SECRET,
    Device,
    connect,
    fact_id,
    make_devices,
    normalized_export,
    plaintexts,
    restore,
    settle,
    shuttle,
    texts,
    vault_bytes,
    visible,
)
from vodou_desktop import paths
from vodou_desktop.data import copies
from vodou_desktop.data.backup import backup_vault
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, pin, remember, save_document
from vodou_desktop.sync import sealing
from vodou_desktop.sync.engine import S
from vodou_desktop.sync.folder import SyncFolder
from vodou_desktop.vault import Vault
from vodou_desktop.vault.hlc import COUNTER_MAX
from vodou_desktop.vault.settings_store import set_setting

CLI = Origin(kind="cli")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[list[Device]]:
    devices = make_devices(tmp_path, ["laptop", "desktop"])
    connect(devices, random.Random(1))
    yield devices
    for d in devices:
        d.vault.close()


def _backups() -> Path:
    folder = paths.data_dir() / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _backup(device: Device, n: int = 1) -> Path:
    dest = _backups() / f"{device.vault.path.name}.backup-2026010{n}T000000"
    backup_vault(device.vault.path, dest)
    return dest


def _no_canary(devices: list[Device], canary: bytes) -> None:
    for d in devices:
        assert canary not in vault_bytes(d.vault), d.name
        for text in plaintexts(d.folder):
            assert canary not in text, d.name
        for copy in [*_backups().iterdir(), *d.vault.path.parent.glob(d.vault.path.name + ".before-*")]:
            assert canary not in copy.read_bytes(), copy.name


# -- a restore ------------------------------------------------------------------------------------------

def test_a_restored_vault_sends_what_it_does_next_and_its_erase_reaches_every_computer(pair: list[Device]) -> None:
    """Reproduction 1: backup, a change, sync, restore, erase: the erase reaches the other computer; the
    change made between the backup and the restore stays (the other computer has it and sends it back),
    and nothing is refused."""
    rng = random.Random(2)
    laptop, desktop = pair
    remember(laptop.vault, "CANARY-r1 a memory made before the backup", CLI)
    settle(pair, rng)
    backup = _backup(laptop)
    remember(laptop.vault, "made after the backup", CLI)
    settle(pair, rng)
    before = laptop.device_id
    restore(laptop, backup)
    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, "CANARY-r1 a memory made before the backup"))
    settle(pair, rng)
    assert laptop.device_id != before  # a new device: none of its numbers is ever given twice
    remember(laptop.vault, "made after the restore", CLI)
    settle(pair, rng)
    for d in pair:
        assert {"made after the backup", "made after the restore"} <= texts(d.vault), d.name
        assert d.engine.status()["problems"] == [], d.name
    _no_canary(pair, b"CANARY-r1")
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault)


def test_a_number_given_twice_with_other_content_is_refused_and_reported(pair: list[Device]) -> None:
    """A file under a number another computer applied, holding changes it never had (a second vault under
    one identity): refused, named in the status, never applied without a word."""
    rng = random.Random(3)
    laptop, desktop = pair
    remember(laptop.vault, "the file that was applied", CLI)
    settle(pair, rng)
    keys = sealing.FolderKeys.from_secret(SECRET)
    files = SyncFolder(desktop.folder).change_files(laptop.device_id)
    seq = max(files)
    payload = sealing.unseal(keys, "c", laptop.device_id, seq, files[seq].read_bytes())
    create = next(r for r in payload["records"] if r["e"] == "fact")
    other = {**create, "k": "f" * 32, "v": {**create["v"], "text": "content the desktop never had"}}
    forged = {**payload, "gen": payload["gen"] + 1, "records": [other]}  # as the old writer sealed a reused number
    files[seq].write_bytes(sealing.seal(keys, "c", laptop.device_id, seq, forged))
    report = desktop.run()
    assert len(report.refused) == 1 and files[seq].name in report.refused[0], report.refused
    assert "content the desktop never had" not in texts(desktop.vault)
    assert desktop.engine.status()["problems"] == report.refused


# -- forget and undo as operations ------------------------------------------------------------------------

@pytest.mark.parametrize("undo_first", [True, False])
def test_an_undo_never_shows_a_memory_another_computer_still_forgets(pair: list[Device], undo_first: bool) -> None:
    """Reproduction 2: A forgets a host, B (not knowing) forgets the same memory later; A undoes its own
    forget before it hears of B's (or after: both orders). The memory stays hidden on both while B's forget
    is active, and comes back on both when it is undone too."""
    rng = random.Random(4)
    laptop, desktop = pair
    remember(laptop.vault, "otters visit at dawn", Origin(kind="note", url="https://otters.example/page"))
    settle(pair, rng)
    by_host = Forgetting(laptop.vault).forget_host("otters.example")["op"]
    by_desktop = Forgetting(desktop.vault).forget_fact(fact_id(desktop.vault, "otters visit at dawn"))["op"]
    if undo_first:
        Forgetting(laptop.vault).undo(by_host)
    settle(pair, rng)
    if not undo_first:
        Forgetting(laptop.vault).undo(by_host)
    settle(pair, rng)
    for d in pair:
        assert "otters visit at dawn" not in visible(d.vault), d.name
        undone = d.vault.read(lambda c: c.execute("SELECT undone_at FROM operations WHERE id = ?",
                                                  (by_desktop,)).fetchone())
        assert undone is not None and undone[0] is None, d.name  # the desktop's forget is still active
    Forgetting(laptop.vault).undo(by_desktop)  # an undo of another computer's forget, here
    settle(pair, rng)
    for d in pair:
        assert "otters visit at dawn" in visible(d.vault), d.name
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault)


# -- an erase reaches every copy -------------------------------------------------------------------------

def test_an_erase_that_arrives_by_sync_leaves_the_backups_and_earlier_copies_of_that_computer(
        pair: list[Device], tmp_path: Path) -> None:
    """Reproduction 3: the desktop's backups folder and its ``before-`` copy held the text; an erase on the
    laptop rewrites them; a copy written elsewhere is named as not reached."""
    rng = random.Random(5)
    laptop, desktop = pair
    remember(laptop.vault, "CANARY-c3 my bank PIN", CLI)
    remember(laptop.vault, "an ordinary memory", CLI)
    settle(pair, rng)
    _backup(desktop)
    shutil.copyfile(_backup(desktop, 2), desktop.vault.path.with_name(desktop.vault.path.name
                                                                      + ".before-restore-20260101T000000"))
    outside = tmp_path / "elsewhere.sqlite"
    backup_vault(desktop.vault.path, outside)
    copies.record(outside, "backup")
    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, "CANARY-c3 my bank PIN"))
    laptop.run()
    shutil.copytree(laptop.folder / "vodou", desktop.folder / "vodou", dirs_exist_ok=True)
    report = desktop.run()
    assert report.copies_rewritten == 3  # two backups, one before- copy
    assert any(str(outside) in line for line in report.warnings)  # named, in the report and the status
    assert any(str(outside) in line for line in desktop.engine.status()["problems"])
    settle(pair, rng)
    _no_canary(pair, b"CANARY-c3")
    assert b"CANARY-c3" in outside.read_bytes()  # out of reach, and said so
    with Vault.open(next(p for p in _backups().iterdir() if p.name.startswith(desktop.vault.path.name))) as copy:
        assert "an ordinary memory" in texts(copy)  # the rest of the backup is kept


# -- the clock -------------------------------------------------------------------------------------------

def test_the_last_pin_wins_after_a_stamp_at_the_widest_counter(pair: list[Device]) -> None:
    """Reproduction 5: the laptop's clock is at the widest counter (ahead of the wall clock, as after it
    applied a stamp from a computer whose clock runs ahead): its next changes still win everywhere."""
    import time

    rng = random.Random(6)
    laptop, desktop = pair
    remember(laptop.vault, "the heron nests by the lake", CLI)
    settle(pair, rng)
    ahead = int(time.time() * 1000) + 3_600_000
    laptop.vault.write(lambda c, ch: set_setting(c, ch, S["hlc"], f"{ahead}.{COUNTER_MAX - 1}"))
    target = fact_id(laptop.vault, "the heron nests by the lake")
    for pinned in (True, False, True, False):  # each its own run: each its own stamp
        pin(laptop.vault, target, pinned)
        laptop.run()
    settle(pair, rng)
    for d in pair:
        row = d.vault.read(lambda c: c.execute("SELECT pinned_from FROM chunks WHERE text = ?",
                                               ("the heron nests by the lake",)).fetchone())
        assert row is not None and row[0] is None, d.name  # unpinned, as the last change says
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault)


# -- Library documents, erase of a host, removing a computer ------------------------------------------------

def test_library_documents_sync_with_their_forget_undo_and_erase(trio: list[Device]) -> None:
    rng = random.Random(7)
    laptop, desktop, tablet = trio
    body = "Herons of the lake.\n\n" + "The heron stands still for hours in the reeds. " * 40
    doc = save_document(laptop.vault, body + "CANARY-d8", Origin(kind="library", url="https://birds.example/h",
                                                                 title="Herons"))
    settle(trio, rng)
    for d in trio:
        got = d.vault.read(lambda c: c.execute("SELECT count(*), min(title) FROM documents").fetchone())
        assert got == (1, "Herons"), d.name
        assert b"CANARY-d8" in vault_bytes(d.vault), d.name
    op = Forgetting(desktop.vault).forget_document(
        int(desktop.vault.read(lambda c: c.execute("SELECT id FROM documents").fetchone()[0])))["op"]
    settle(trio, rng)
    hidden = "SELECT invalid_at IS NOT NULL FROM documents"
    assert all(d.vault.read(lambda c: c.execute(hidden).fetchone()[0]) == 1 for d in trio)
    Forgetting(tablet.vault).undo(op)
    settle(trio, rng)
    assert all(d.vault.read(lambda c: c.execute(hidden).fetchone()[0]) == 0 for d in trio)
    Forgetting(laptop.vault).erase_document(doc)
    settle(trio, rng)
    for d in trio:
        assert d.vault.read(lambda c: c.execute("SELECT count(*) FROM documents").fetchone()[0]) == 0, d.name
    _no_canary(trio, b"CANARY-d8")


def test_erase_host_reaches_the_memories_and_forget_records_of_every_computer(trio: list[Device]) -> None:
    """``erase --host`` on one computer: the host's memories another computer made (and this one never had)
    go too, and no computer's operations or files name the host any more."""
    rng = random.Random(8)
    laptop, desktop, tablet = trio
    at = Origin(kind="note", url="https://secret-clinic.example/visit")
    remember(laptop.vault, "laptop memory from the clinic", at)
    settle(trio, rng)
    Forgetting(desktop.vault).forget_host("secret-clinic.example")
    remember(tablet.vault, "tablet memory from the clinic", Origin(kind="note", url="https://a.secret-clinic.example/"))
    tablet.run()  # its file is written, not yet anywhere else
    desktop.run()
    Forgetting(laptop.vault).erase_host("secret-clinic.example")
    settle(trio, rng)
    for d in trio:
        assert not any("clinic" in t for t in texts(d.vault)), d.name
        assert b"secret-clinic" not in vault_bytes(d.vault), d.name
        assert not any(b"secret-clinic" in t for t in plaintexts(d.folder)), d.name
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


def test_a_removed_computer_is_ignored_by_every_computer(trio: list[Device]) -> None:
    rng = random.Random(9)
    laptop, desktop, tablet = trio
    settle(trio, rng)
    lost = tablet.device_id
    done = laptop.engine.remove("tablet")
    assert done["device"] == lost and done["files_deleted"] >= 1
    remember(tablet.vault, "written on the lost computer", CLI)
    tablet.run()  # it still runs, and still holds the key
    remember(laptop.vault, "written after the removal", CLI)
    settle([laptop, desktop], rng)
    shuttle(trio, rng, share=1.0)  # its files reach the others again
    for d in (laptop, desktop):
        report = d.run()
        assert report.refused == [], d.name
        assert "written on the lost computer" not in texts(d.vault), d.name
        assert [x["removed"] for x in d.engine.status()["devices"] if x["id"] == lost] == [True], d.name
    assert "written after the removal" in texts(desktop.vault)
