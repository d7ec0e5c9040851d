"""A file that breaks a rule waits alone: every record is checked before any is applied, the file is
refused in one line naming its computer and number, and every other computer's files still apply. Files
are measured before they are read; the folder is the person's, never made by a run."""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli
from tests.unit.sync.support import SECRET, Device, connect, make_devices, shuttle, texts
from vodou_desktop.errors import KnownError
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.sync import sealing
from vodou_desktop.sync.folder import CHANGE_LIMIT, DEVICE_LIMIT, SNAPSHOT_FLOOR, SyncFolder
from vodou_desktop.vault import sync_store as st

CLI = Origin(kind="cli")
KEYS = sealing.FolderKeys.from_secret(SECRET)


def _next_file_of_laptop_at_tablet(trio: list[Device]) -> tuple[Path, dict[str, Any], int]:
    """The laptop writes a memory; the desktop too; both files reach the tablet. The laptop's file, opened."""
    laptop, desktop, tablet = trio
    remember(laptop.vault, "from the laptop", CLI)
    remember(desktop.vault, "from the desktop", CLI)
    laptop.run()
    desktop.run()
    shuttle(trio, random.Random(2), share=1.0)
    seq = max(SyncFolder(tablet.folder).change_files(laptop.device_id))
    path = SyncFolder(tablet.folder).change_path(laptop.device_id, seq)
    return path, sealing.unseal(KEYS, "c", laptop.device_id, seq, path.read_bytes()), seq


def _create(payload: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in payload["records"] if r["e"] == "fact" and r["f"] == "create")


def _site(payload: dict[str, Any], mode: str) -> None:
    payload["records"].append({"e": "site", "k": "otters.example", "f": "mode", "h": _create(payload)["h"],
                               "v": {"mode": mode, "created_at": "2026-01-01T00:00:00+00:00",
                                     "updated_at": "2026-01-01T00:00:00+00:00"}})


def _set(where: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        rec = _create(payload)
        if where == "h" and value is None:
            del rec["h"]
        elif where == "h":
            rec["h"] = value
        elif where == "tier":
            rec["v"]["source"]["tier"] = value
        else:
            rec["v"][where] = value

    return change


def _version(value: object) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        if value is None:
            del payload["v"]
        else:
            payload["v"] = value

    return change


BAD = {  # reproduction 4: each broke the whole run, for every computer, on every run
    "a site mode 'always'": lambda p: _site(p, "always"),
    "a tier 'root'": _set("tier", "root"),
    "a missing stamp": _set("h", None),
    "an integer stamp": _set("h", 1700000000),
    "a 9,000-character text": _set("text", "x" * 9000),
    "a kind nobody writes": _set("kind", "root"),
    "an unknown project shape": _set("project", {"name": "x"}),
    "no format version": _version(None),
    "a version that is text": _version("1"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_a_bad_record_refuses_its_file_alone_in_one_line_naming_computer_and_number(trio: list[Device],
                                                                                    what: str) -> None:
    laptop, desktop, tablet = trio
    path, payload, seq = _next_file_of_laptop_at_tablet(trio)
    BAD[what](payload)
    path.write_bytes(sealing.seal(KEYS, "c", laptop.device_id, seq, payload))
    for _ in range(2):  # and again on the next run: the same line, the others still apply
        report = tablet.run()
        assert len(report.refused) == 1, report.refused
        line = report.refused[0]
        assert "\n" not in line and "'laptop'" in line and f"change {seq} " in line and path.name in line, line
        assert "from the desktop" in texts(tablet.vault)
        assert "from the laptop" not in texts(tablet.vault)  # nothing of the refused file was applied
        assert tablet.engine.status()["problems"] == report.refused
    remember(desktop.vault, "the desktop goes on", CLI)
    desktop.run()
    shuttle(trio, random.Random(3), share=1.0)  # the laptop's good copy comes back too
    assert tablet.run().refused == []
    assert {"from the laptop", "the desktop goes on"} <= texts(tablet.vault)


def test_a_file_that_fails_while_it_is_applied_is_rolled_back_alone(trio: list[Device],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Any error inside one file's apply (here injected into the site rule writer): nothing of that file is
    kept, it is refused in one line, the other computers' files apply."""
    laptop, desktop, tablet = trio
    path, payload, seq = _next_file_of_laptop_at_tablet(trio)
    _site(payload, "off")
    path.write_bytes(sealing.seal(KEYS, "c", laptop.device_id, seq, payload))

    def broken(self: st.Applier, key: str, v: Any, stamp: str) -> str:
        raise ValueError("the site rule writer failed")

    monkeypatch.setattr(st.Applier, "_site_mode", broken)
    report = tablet.run()
    assert len(report.refused) == 1 and "could not be applied" in report.refused[0] and "'laptop'" in report.refused[0]
    assert "from the laptop" not in texts(tablet.vault) and "from the desktop" in texts(tablet.vault)
    monkeypatch.undo()
    assert tablet.run().refused == []
    assert "from the laptop" in texts(tablet.vault)


def test_records_of_a_newer_version_wait_kept_and_the_rest_of_their_file_applies(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    path, payload, seq = _next_file_of_laptop_at_tablet(trio)
    stamp = _create(payload)["h"]
    future = [{"e": "calendar", "k": "cal-1", "f": "create", "h": stamp, "v": {"title": "dentist"}},
              {"e": "fact", "k": _create(payload)["k"], "f": "colour", "h": stamp, "v": "blue"}]
    payload["records"] += copy.deepcopy(future)
    path.write_bytes(sealing.seal(KEYS, "c", laptop.device_id, seq, payload))
    report = tablet.run()
    assert report.refused == []
    assert {"from the laptop", "from the desktop"} <= texts(tablet.vault)
    assert tablet.vault.read(st.waiting) == future
    assert tablet.engine.status()["waiting_for_newer_version"] == 2
    # a whole file of a newer format waits too, with the later files of its computer
    remember(laptop.vault, "written by a newer Vodou", CLI)
    laptop.run()
    nxt = max(SyncFolder(laptop.folder).change_files(laptop.device_id))
    newer = SyncFolder(tablet.folder).change_path(laptop.device_id, nxt)
    data = sealing.unseal(KEYS, "c", laptop.device_id, nxt,
                          SyncFolder(laptop.folder).change_path(laptop.device_id, nxt).read_bytes())
    newer.write_bytes(sealing.seal(KEYS, "c", laptop.device_id, nxt, {**data, "v": 2}))
    report = tablet.run()
    assert report.refused == [] and any("newer Vodou" in w and "'laptop'" in w for w in report.warnings)
    assert "written by a newer Vodou" not in texts(tablet.vault)


def test_waiting_records_apply_once_this_version_knows_them(trio: list[Device],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    laptop, desktop, tablet = trio
    path, payload, seq = _next_file_of_laptop_at_tablet(trio)
    rule = {"e": "site", "k": "later.example", "f": "mode", "h": _create(payload)["h"],
            "v": {"mode": "off", "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}}
    payload["records"].append({**rule, "e": "rule"})  # an entity this version does not know by that name
    path.write_bytes(sealing.seal(KEYS, "c", laptop.device_id, seq, payload))
    tablet.run()
    assert len(tablet.vault.read(st.waiting)) == 1
    # an update teaches this version the entity: the record waiting since is applied on the next run
    monkeypatch.setattr(st, "ENTITIES", (*st.ENTITIES, "rule"))
    monkeypatch.setitem(st.FIELDS, "rule", ("mode",))
    monkeypatch.setattr(st.Applier, "_rule_mode", st.Applier._site_mode, raising=False)
    from vodou_desktop.sync import validate

    monkeypatch.setattr(validate, "ENTITIES", st.ENTITIES)
    monkeypatch.setitem(validate._KEYS, "rule", validate._host)
    monkeypatch.setitem(validate._VALUES, ("rule", "mode"), validate._site_mode)
    report = tablet.run()
    assert report.refused == [] and any("waited for this version" in n for n in report.notes)
    assert tablet.vault.read(st.waiting) == []
    mode = tablet.vault.read(lambda c: c.execute("SELECT mode FROM site_rules WHERE host = 'later.example'").fetchone())
    assert mode == ("off",)


# -- bounded reading -----------------------------------------------------------------------------------

def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk (what a 256 MiB junk file looks like to ``stat``)."""
    path.unlink(missing_ok=True)
    with path.open("wb") as fh:
        fh.write(sealing.MAGIC)
        fh.truncate(size)


def test_files_over_their_size_are_refused_unread_and_the_rest_carries_on(trio: list[Device]) -> None:
    """Reproduction 6: a junk file in the place of a change file, a device record, a snapshot (no key needed
    to put one there): refused by its size, before a byte of it is read."""
    laptop, desktop, tablet = trio
    path, _, seq = _next_file_of_laptop_at_tablet(trio)
    _sparse(path, CHANGE_LIMIT + 1)
    report = tablet.run()
    assert len(report.refused) == 1 and "it was not read" in report.refused[0] and path.name in report.refused[0]
    assert "from the desktop" in texts(tablet.vault)
    _sparse(SyncFolder(tablet.folder).device_file(desktop.device_id), DEVICE_LIMIT + 1)
    report = tablet.run()
    assert any("device.vsd" in line and "it was not read" in line for line in report.refused)


def test_a_joining_computer_refuses_an_oversized_snapshot_unread(tmp_path: Path) -> None:
    laptop, joiner = make_devices(tmp_path, ["laptop", "joiner"])
    try:
        connect([laptop], random.Random(1))
        shuttle([laptop, joiner], random.Random(1), share=1.0)
        _sparse(SyncFolder(joiner.folder).snapshot_file(laptop.device_id), SNAPSHOT_FLOOR + (1 << 20) + 1)
        joiner.engine.setup(joiner.folder, "joiner", SECRET, joining=True)
        report = joiner.run()
        assert any("snapshot" in line and "it was not read" in line for line in report.refused), report.refused
    finally:
        laptop.vault.close()
        joiner.vault.close()


def test_a_small_sealed_file_may_not_expand_past_its_limit() -> None:
    data = sealing.seal(KEYS, "c", "a" * 16, 1, {"records": ["x" * 50_000]})
    assert len(data) < 1_000
    with pytest.raises(sealing.Refused, match="expands to more than"):
        sealing.unseal(KEYS, "c", "a" * 16, 1, data, max_plain=10_000)
    assert sealing.unseal(KEYS, "c", "a" * 16, 1, data, max_plain=60_000) == {"records": ["x" * 50_000]}


# -- the folder is the person's ----------------------------------------------------------------------------

def test_a_run_never_makes_the_folder_again_once_it_is_gone(trio: list[Device]) -> None:
    laptop = trio[0]
    remember(laptop.vault, "waits for the folder", CLI)
    gone = laptop.folder.with_name(laptop.folder.name + "-unmounted")
    laptop.folder.rename(gone)
    with pytest.raises(KnownError, match="is not there"):
        laptop.run()
    assert not laptop.folder.exists()  # neither the folder nor anything under it was made again
    gone.rename(laptop.folder)
    assert laptop.run().sent  # the change waited, and goes once the folder is back


def test_a_folder_that_goes_away_during_a_run_is_not_made_again(trio: list[Device],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The drive is unmounted after the run read the devices and before it writes its own files."""
    from vodou_desktop.sync.engine import SyncEngine

    laptop, desktop, tablet = trio
    _next_file_of_laptop_at_tablet(trio)
    remember(tablet.vault, "from the tablet", CLI)
    gone = tablet.folder.with_name(tablet.folder.name + "-unmounted")
    real = SyncEngine._receive

    def unmounted(self: SyncEngine, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        if tablet.folder.exists():
            tablet.folder.rename(gone)

    monkeypatch.setattr(SyncEngine, "_receive", unmounted)
    with pytest.raises(KnownError, match="is not there") as caught:
        tablet.run()
    assert "\n" not in str(caught.value)
    assert not tablet.folder.exists()


def test_change_numbers_are_ascii_digits_only(trio: list[Device]) -> None:
    laptop, desktop, tablet = trio
    path, _, seq = _next_file_of_laptop_at_tablet(trio)
    shadow = path.with_name(f"{seq:010d}".translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")) + ".vsc")
    path.rename(shadow)  # the same number in Arabic-Indic digits, where the real file is not yet
    assert shadow not in SyncFolder(tablet.folder).change_files(laptop.device_id).values()
    tablet.run()
    assert "from the laptop" not in texts(tablet.vault)
    shutil.copyfile(shadow, path)  # the real one arrives
    tablet.run()
    assert "from the laptop" in texts(tablet.vault)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs")
def test_a_full_disk_under_the_folder_is_one_line(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)]).returncode != 0:
        pytest.skip("mount refused (no CAP_SYS_ADMIN here)")
    try:
        laptop, = make_devices(tmp_path, ["laptop"])
        try:
            laptop.engine.setup(mount, "laptop", SECRET, joining=False)
            fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while os.write(fd, bytes(4096)):
                    pass
            except OSError:  # full
                pass
            finally:
                os.close(fd)
            for n in range(20):
                remember(laptop.vault, f"a memory that needs room {n} " + os.urandom(200).hex(), CLI)
            with pytest.raises(KnownError) as caught:
                laptop.run()
            assert "full" in str(caught.value) and "\n" not in str(caught.value)
            (mount / "filler").unlink()
            laptop.run()  # nothing was lost: everything goes once there is room
            assert laptop.vault.read(st.pending_journal) == 0 and laptop.vault.read(st.outbox) == []
        finally:
            laptop.vault.close()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_join_and_setup_work_on_a_computer_where_vodou_never_wrote_anything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduction 7: the documented first step on a second computer, on a fresh home."""
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    folder = tmp_path / "Sync"
    folder.mkdir()
    first, second = tmp_path / "home-a", tmp_path / "home-b"
    monkeypatch.setenv("VODOU_HOME", str(first))
    key_file = tmp_path / "key.txt"
    done = run_cli("sync", "setup", str(folder), "--name", "laptop", "--key-file", str(key_file))
    assert done.code == 0, done.err
    assert run_cli("mem", "add", "written on the first computer").code == 0
    assert run_cli("sync", "now").code == 0
    monkeypatch.setenv("VODOU_HOME", str(second))
    joined = run_cli("sync", "join", str(folder), "--name", "desktop", "--key-file", str(key_file))
    assert joined.code == 0, joined.err
    assert (second / "data").is_dir() and oct((second / "data").stat().st_mode & 0o777) == "0o700"
    assert "written on the first computer" in run_cli("mem", "list", "--json").out
    status = json.loads(run_cli("sync", "status", "--json").out)
    assert status["set_up"] and status["problems"] == []


def test_every_operation_kind_this_version_writes_is_applied_by_another_computer() -> None:
    """An operation of a kind the receiving version does not know waits for a newer version; one this
    very version writes must never wait (an undone import or move would stay visible elsewhere)."""
    from vodou_desktop.sync.validate import KNOWN_OPS
    from vodou_desktop.vault import journal_store, retraction

    written = {value for module in (retraction, journal_store) for name, value in vars(module).items()
               if name.endswith("_KIND") and isinstance(value, str)}
    assert written and not written - KNOWN_OPS, sorted(written - KNOWN_OPS)
