"""Orders the other tests never tried: an erase that arrives before its memory, a local change made while a
run is under way, compaction without a snapshot that covers, a computer known before its record arrives,
a file rewritten after an erase, and the order of a sync file's writes on disk."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.unit.sync.support import (
    SECRET,
    Device,
    connect,
    fact_id,
    make_devices,
    normalized_export,
    plaintexts,
    settle,
    shuttle,
    texts,
    vault_bytes,
)
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync import sealing
from vodou_desktop.sync.engine import SyncEngine
from vodou_desktop.sync.folder import SyncFolder

CLI = Origin(kind="cli")
KEYS = sealing.FolderKeys.from_secret(SECRET)


def _deliver(device_id: str, source: Device, *targets: Device) -> None:
    """The engine brings one device's files, as they are in ``source``'s copy, to ``targets`` only."""
    for target in targets:
        shutil.copytree(SyncFolder(source.folder).device_dir(device_id),
                        SyncFolder(target.folder).device_dir(device_id), dirs_exist_ok=True)


def test_a_memory_whose_erase_arrived_first_never_comes_back(trio: list[Device]) -> None:
    """The tablet hears of the erase (from the laptop) before the older file that made the memory (from the
    desktop): no byte of the memory ever reaches it."""
    laptop, desktop, tablet = trio
    remember(desktop.vault, "CANARY-o1 written on the desktop", CLI)
    desktop.run()
    older = {p.name: p.read_bytes() for p in SyncFolder(desktop.folder).device_dir(desktop.device_id).iterdir()}
    _deliver(desktop.device_id, desktop, laptop)
    laptop.run()
    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, "CANARY-o1 written on the desktop"))
    laptop.run()
    _deliver(laptop.device_id, laptop, tablet)
    tablet.run()  # the erase first
    mine = SyncFolder(tablet.folder).device_dir(desktop.device_id)
    mine.mkdir(parents=True, exist_ok=True)
    for name, data in older.items():  # then the desktop's file from before it heard of the erase
        (mine / name).write_bytes(data)
    tablet.run()
    assert b"CANARY-o1" not in vault_bytes(tablet.vault)
    assert "CANARY-o1 written on the desktop" not in texts(tablet.vault)
    settle(trio, random.Random(2))
    for d in trio:
        assert b"CANARY-o1" not in vault_bytes(d.vault), d.name
        assert not any(b"CANARY-o1" in t for t in plaintexts(d.folder)), d.name


def test_a_change_made_here_during_a_run_wins_over_an_older_one_applied_in_that_run(
        trio: list[Device], monkeypatch: pytest.MonkeyPatch) -> None:
    """The desktop sets a rule; later, while the laptop's run is between reading the devices and applying
    their files, the laptop sets the same rule otherwise. After settling, every computer says the laptop's."""
    laptop, desktop, tablet = trio
    SiteModes(desktop.vault).set_rule("otters.example", "off")
    desktop.run()
    _deliver(desktop.device_id, desktop, laptop)
    real = SyncEngine._read_devices

    def meanwhile(self: SyncEngine, *args: Any, **kwargs: Any) -> Any:
        devices = real(self, *args, **kwargs)
        if self.vault is laptop.vault:
            SiteModes(laptop.vault).set_rule("otters.example", "collect")  # later than the desktop's
        return devices

    monkeypatch.setattr(SyncEngine, "_read_devices", meanwhile)
    laptop.run()
    monkeypatch.setattr(SyncEngine, "_read_devices", real)
    settle(trio, random.Random(3))
    for d in trio:
        assert SiteModes(d.vault).resolve("otters.example").mode == "collect", d.name


def test_compaction_keeps_every_file_no_snapshot_covers_and_a_later_joiner_gets_all(tmp_path: Path) -> None:
    """Three memories in three runs, the other computer applies each, no snapshot is forced: a computer that
    joins later still holds all three."""
    laptop, desktop, tablet = make_devices(tmp_path, ["laptop", "desktop", "tablet"])
    try:
        rng = random.Random(4)
        connect([laptop, desktop], rng)
        for n in range(3):
            remember(laptop.vault, f"laptop memory {n}", CLI)
            laptop.run()
            settle([laptop, desktop], rng)
        shuttle([laptop, desktop, tablet], rng, share=1.0)
        tablet.engine.setup(tablet.folder, "tablet", SECRET, joining=True)
        settle([laptop, desktop, tablet], rng)
        assert {f"laptop memory {n}" for n in range(3)} <= texts(tablet.vault)
    finally:
        for d in (laptop, desktop, tablet):
            d.vault.close()


def test_a_computer_known_before_its_record_arrives_counts_as_having_applied_nothing(tmp_path: Path) -> None:
    """A late joiner learns of the tablet from a snapshot, before the tablet's own record reaches it: it keeps
    its change files until the tablet has applied them, whatever the others have."""
    laptop, desktop, tablet, joiner = make_devices(tmp_path, ["laptop", "desktop", "tablet", "joiner"])
    group = [laptop, desktop, tablet]
    try:
        rng = random.Random(5)
        connect(group, rng)
        settle(group, rng)
        desktop.engine.run(force_snapshot=True)  # its snapshot names the tablet
        for source in (laptop, desktop):  # the tablet's folder has not reached the joiner yet
            _deliver(source.device_id, source, joiner)
        joiner.engine.setup(joiner.folder, "joiner", SECRET, joining=True)
        joiner.run()
        assert tablet.device_id in joiner.vault.read(lambda c: [r[0] for r in c.execute(
            "SELECT device_id FROM sync_peers")])
        remember(joiner.vault, "written on the joiner", CLI)
        joiner.run()
        own = set(SyncFolder(joiner.folder).change_files(joiner.device_id))
        for _ in range(2):  # the laptop and the desktop apply it and say so; the joiner reads that
            for other in (laptop, desktop):
                _deliver(joiner.device_id, joiner, other)
                other.run()
                _deliver(other.device_id, other, joiner)
            joiner.engine.run(force_snapshot=True)
        assert set(SyncFolder(joiner.folder).change_files(joiner.device_id)) >= own  # none compacted away
        settle([*group, joiner], rng)
        assert "written on the joiner" in texts(tablet.vault)
    finally:
        for d in (*group, joiner):
            d.vault.close()


def test_a_file_rewritten_after_an_erase_is_its_next_generation_and_nobody_refuses_it(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    rng = random.Random(6)
    settle(trio, rng)  # every computer knows the others
    remember(laptop.vault, "CANARY-g6 erased later", CLI)
    remember(laptop.vault, "kept in the same file", CLI)
    laptop.run()
    seq = max(SyncFolder(laptop.folder).change_files(laptop.device_id))
    settle([laptop, desktop], rng)  # the desktop applied it, generation 0; the tablet has not yet (no compaction)
    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, "CANARY-g6 erased later"))
    laptop.run()
    _deliver(laptop.device_id, laptop, desktop)
    assert desktop.run().refused == []  # not "a replayed old file"
    for d in (laptop, desktop):
        payload = sealing.unseal(KEYS, "c", laptop.device_id, seq,
                                 SyncFolder(d.folder).change_path(laptop.device_id, seq).read_bytes())
        assert payload["gen"] == 1 and "kept in the same file" in str(payload["records"]), d.name
        assert "CANARY-g6" not in str(payload["records"])
    gen = desktop.vault.read(lambda c: c.execute("SELECT gen FROM sync_applied WHERE device_id = ? AND seq = ?",
                                                 (laptop.device_id, seq)).fetchone())
    assert gen == (1,)
    assert desktop.run().refused == []  # and on every later run
    settle(trio, rng)  # (settle fails on any refusal)
    assert "kept in the same file" in texts(tablet.vault)
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


# -- the order of a sync file's writes ---------------------------------------------------------------------

def test_every_sync_file_is_renamed_once_into_place_whole_after_an_fsync(trio: list[Device],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """For each file a run writes (change files, device record, snapshot): one ``os.replace`` into its name,
    of a file that holds every byte, after an ``os.fsync`` of it; then an fsync of its folder. Nothing opens
    the final name for writing."""
    laptop = trio[0]
    remember(laptop.vault, "a memory to send", CLI)
    events: list[tuple[str, str, bytes | None]] = []
    real_fsync, real_replace, real_open = os.fsync, os.replace, os.open

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        events.append(("fsync", path, Path(path).read_bytes() if Path(path).is_file() else None))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(("replace", f"{src}\0{dst}", Path(src).read_bytes()))
        real_replace(src, dst)

    def opened(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR):
            events.append(("open-write", str(path), None))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "open", opened)
    laptop.engine.run(force_snapshot=True)
    monkeypatch.undo()
    base = str(SyncFolder(laptop.folder).device_dir(laptop.device_id))
    finals = [e[1].split("\0")[1] for e in events if e[0] == "replace" and e[1].split("\0")[1].startswith(base)]
    kinds = {Path(f).suffix for f in finals}
    assert kinds == {".vsc", ".vsd", ".vss"}, finals  # every kind of file a run writes was seen
    for final in set(finals):
        assert finals.count(final) == 1, final  # renamed into place once
        at = next(i for i, e in enumerate(events) if e[0] == "replace" and e[1].endswith("\0" + final))
        src, data = events[at][1].split("\0")[0], events[at][2]
        assert data == Path(final).read_bytes()  # it held every byte when it was renamed
        assert any(e[0] == "fsync" and e[1] == src and e[2] == data for e in events[:at]), final  # flushed first
        assert any(e[0] == "fsync" and e[1] == str(Path(final).parent) for e in events[at + 1:]), final
        assert not any(e[0] == "open-write" and e[1] == final for e in events), final  # never written in place
