"""Three vaults on one machine, each with its own copy of the sync folder; files copied between the copies
in random orders with delays. They converge, edits propagate, erase leaves no byte of the text anywhere."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.sync.support import (
    SECRET,
    Device,
    connect,
    make_devices,
    normalized_export,
    plaintexts,
    settle,
    shuttle,
    vault_bytes,
)
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, correct, move, pin, remember
from vodou_desktop.sync.folder import SyncFolder
from vodou_desktop.vault import Vault

CLI = Origin(kind="cli")


@pytest.fixture
def trio(tmp_path: Path) -> Iterator[list[Device]]:
    devices = make_devices(tmp_path, ["laptop", "desktop", "tablet"])
    yield devices
    for d in devices:
        d.vault.close()


def fact_id(vault: Vault, text: str) -> int:
    row = vault.read(lambda c: c.execute("SELECT id FROM chunks WHERE text = ? AND superseded_by IS NULL",
                                         (text,)).fetchone())
    assert row is not None, f"{text!r} is not in {vault.path.name}"
    return int(row[0])


def state(vault: Vault, text: str) -> dict[str, object]:
    row = vault.read(lambda c: c.execute(
        "SELECT c.invalid_at IS NOT NULL, c.superseded_by IS NOT NULL, c.pinned_from IS NOT NULL, c.project_id,"
        " s.tier FROM chunks c JOIN memory_sources s ON s.id = c.source_id WHERE c.text = ?"
        " ORDER BY c.superseded_by IS NULL DESC, c.id DESC", (text,)).fetchone())  # the current revision first
    assert row is not None
    return dict(zip(("forgotten", "superseded", "pinned", "project", "tier"), row, strict=True))


@pytest.mark.parametrize("seed", [1, 2])
def test_concurrent_writes_on_three_devices_converge(trio: list[Device], seed: int) -> None:
    rng = random.Random(seed)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "written before sync began", CLI, project="garden")
    connect(trio, rng)
    for n, device in enumerate(trio):
        for k in range(4):
            remember(device.vault, f"{device.name} memory {k}", CLI, project=rng.choice([None, "garden", "work"]))
        SiteModes(device.vault).set_rule(f"site{n}.example", rng.choice(["off", "suggest", "collect"]))
        SiteModes(device.vault).set_rule("shared.example", ["off", "suggest", "collect"][n])
        OperatorMemory(device.vault).add("preference", f"{device.name} likes short answers {n}")
        device.run()  # each runs once with what it has, before seeing the others
    settle(trio, rng)
    exports = [normalized_export(d.vault) for d in trio]
    assert exports[0] == exports[1] == exports[2]
    memories = [r for r in exports[0] if r["type"] == "memory"]
    assert len(memories) == 13
    rules = {r["host"]: r["mode"] for r in exports[0] if r["type"] == "site_rule"}
    assert len(rules) == 4  # one each, and the shared host once (the last writer's mode)
    assert sum(r["type"] == "operator_memory" for r in exports[0]) == 3


def test_forget_undo_pin_move_site_rule_and_operator_memory_edits_propagate(trio: list[Device]) -> None:
    rng = random.Random(7)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "the heron nests by the lake", CLI, project="birds")
    remember(laptop.vault, "otters visit at dawn", Origin(kind="note", url="https://otters.example/page"))
    remember(laptop.vault, "moved memory", CLI, project="old")
    connect(trio, rng)
    opm = OperatorMemory(laptop.vault).add("preference", "answers in French")
    settle(trio, rng)

    pin(desktop.vault, fact_id(desktop.vault, "the heron nests by the lake"))
    move(tablet.vault, fact_id(tablet.vault, "moved memory"), "new")
    op = Forgetting(desktop.vault).forget_host("otters.example")["op"]
    SiteModes(tablet.vault).set_rule("otters.example", "off")
    OperatorMemory(tablet.vault).correct(opm.memory.id, "answers in Spanish")
    settle(trio, rng)
    for d in trio:
        assert state(d.vault, "the heron nests by the lake")["pinned"] == 1
        assert state(d.vault, "the heron nests by the lake")["tier"] == "pinned"
        assert state(d.vault, "moved memory")["project"] == "new"
        assert state(d.vault, "otters visit at dawn")["forgotten"] == 1
        assert SiteModes(d.vault).resolve("otters.example").mode == "off"
        assert [m.memory.content for m in OperatorMemory(d.vault).list_memories()] == ["answers in Spanish"]

    Forgetting(laptop.vault).undo(op)  # the undo runs on another device than the forget
    pin(tablet.vault, fact_id(tablet.vault, "the heron nests by the lake"), False)
    SiteModes(desktop.vault).clear_rule("otters.example")
    settle(trio, rng)
    for d in trio:
        assert state(d.vault, "otters visit at dawn")["forgotten"] == 0
        assert state(d.vault, "the heron nests by the lake")["pinned"] == 0
        assert SiteModes(d.vault).resolve("otters.example").mode == "collect"
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


def test_forget_beats_a_concurrent_correction(trio: list[Device]) -> None:
    rng = random.Random(3)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "the meeting is on Monday", CLI)
    connect(trio, rng)
    Forgetting(laptop.vault).forget_fact(fact_id(laptop.vault, "the meeting is on Monday"))
    correct(desktop.vault, fact_id(desktop.vault, "the meeting is on Monday"), "the meeting is on Tuesday")
    settle(trio, rng)
    for d in trio:
        assert state(d.vault, "the meeting is on Tuesday")["forgotten"] == 1
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


def test_concurrent_corrections_keep_both_revisions_and_show_one(trio: list[Device]) -> None:
    rng = random.Random(4)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "the cat is grey", CLI)
    connect(trio, rng)
    correct(laptop.vault, fact_id(laptop.vault, "the cat is grey"), "the cat is silver")
    correct(desktop.vault, fact_id(desktop.vault, "the cat is grey"), "the cat is black")
    settle(trio, rng)
    for d in trio:
        visible = d.vault.read(lambda c: [r[0] for r in c.execute(
            "SELECT text FROM chunks WHERE superseded_by IS NULL AND invalid_at IS NULL")])
        assert len(visible) == 1 and visible[0] in ("the cat is silver", "the cat is black")
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


def test_erase_leaves_no_canary_in_any_vault_or_any_file_of_any_folder_copy(trio: list[Device]) -> None:
    rng = random.Random(5)
    laptop, desktop, tablet = trio
    canary = "CANARY-7f3a9 my bank PIN"
    remember(tablet.vault, "an ordinary memory", CLI)
    connect(trio, rng)
    remember(tablet.vault, canary, CLI)
    settle(trio, rng)
    correct(desktop.vault, fact_id(desktop.vault, canary), canary + " (corrected)")  # a revision on another device
    pin(tablet.vault, fact_id(tablet.vault, canary))  # concurrent with the correction
    settle(trio, rng)
    assert all(canary.encode() in vault_bytes(d.vault) for d in trio)
    assert any(canary.encode() in text for d in trio for text in plaintexts(d.folder))

    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, canary + " (corrected)"))
    settle(trio, rng)
    for d in trio:
        assert canary.encode() not in vault_bytes(d.vault), d.name
        for text in plaintexts(d.folder):
            assert b"CANARY-7f3a9" not in text, d.name
        left = d.vault.read(lambda c: c.execute("SELECT count(*) FROM chunks WHERE text LIKE '%CANARY%'").fetchone())
        assert left is not None and left[0] == 0
    assert "an ordinary memory" in {r["text"] for r in normalized_export(desktop.vault) if r["type"] == "memory"}


def test_a_revision_of_an_erased_memory_arriving_later_is_erased_too(trio: list[Device]) -> None:
    rng = random.Random(6)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "CANARY-b1 first words", CLI)
    connect(trio, rng)
    correct(desktop.vault, fact_id(desktop.vault, "CANARY-b1 first words"), "CANARY-b1 second words")
    desktop.run()  # its change file is written but not yet copied anywhere
    Forgetting(laptop.vault).erase_fact(fact_id(laptop.vault, "CANARY-b1 first words"))
    settle(trio, rng)
    for d in trio:
        assert b"CANARY-b1" not in vault_bytes(d.vault), d.name
        assert not any(b"CANARY-b1" in t for t in plaintexts(d.folder)), d.name


def test_operator_memory_over_its_ceiling_after_a_merge_expires_the_excess(trio: list[Device]) -> None:
    rng = random.Random(8)
    laptop, desktop, _ = trio
    connect(trio, rng)
    OperatorMemory(laptop.vault).add("initiative", "ship the garden app")
    OperatorMemory(desktop.vault).add("initiative", "write the birds book")  # the ceiling is 1
    settle(trio, rng)
    for d in trio:
        rows = OperatorMemory(d.vault).list_memories()
        assert len(rows) == 2
        assert len(OperatorMemory(d.vault).recall()) == 1  # never more than the ceiling is recalled
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault)


def test_compacted_files_and_a_device_joining_later_from_a_snapshot(tmp_path: Path) -> None:
    rng = random.Random(9)
    laptop, desktop, tablet = make_devices(tmp_path, ["laptop", "desktop", "tablet"])
    try:
        connect([laptop, desktop], rng)
        for n in range(3):
            remember(laptop.vault, f"laptop memory {n}", CLI)
            laptop.run()
        remember(desktop.vault, "desktop memory", CLI)
        settle([laptop, desktop], rng)
        laptop.engine.run(force_snapshot=True)
        settle([laptop, desktop], rng)  # the desktop's record says it applied them: the laptop compacts
        assert SyncFolder(laptop.folder).change_files(laptop.device_id) == {}
        remember(laptop.vault, "after the snapshot", CLI)
        laptop.run()
        shuttle([laptop, desktop, tablet], rng, share=1.0)  # the tablet arrives: a snapshot, then later files
        tablet.engine.setup(tablet.folder, "tablet", SECRET, joining=True)
        assert tablet.run().bootstrapped_from in ("laptop", "desktop")
        settle([laptop, desktop, tablet], rng)
        exports = [normalized_export(d.vault) for d in (laptop, desktop, tablet)]
        assert exports[0] == exports[1] == exports[2]
        assert sum(r["type"] == "memory" for r in exports[2]) == 5
    finally:
        for d in (laptop, desktop, tablet):
            d.vault.close()


@pytest.mark.parametrize("undo_on", ["desktop", "tablet"])
def test_an_ai_tools_correction_and_its_undo_propagate(trio: list[Device], undo_on: str) -> None:
    rng = random.Random(12)
    laptop, desktop, tablet = trio
    remember(laptop.vault, "unrelated first memory", CLI)
    remember(laptop.vault, "the train leaves at nine", CLI)
    connect(trio, rng)
    remember(tablet.vault, "a tablet memory that shifts the row numbers", CLI)
    done = Forgetting(desktop.vault).correct_fact(fact_id(desktop.vault, "the train leaves at nine"),
                                                  "the train leaves at ten", by="claude")
    settle(trio, rng)
    for d in trio:
        assert state(d.vault, "the train leaves at nine")["superseded"] == 1
        assert state(d.vault, "the train leaves at ten")["forgotten"] == 0
    undoer = {"desktop": desktop, "tablet": tablet}[undo_on]  # the undo may run on another device
    result = Forgetting(undoer.vault).undo(done["op"])
    assert result["hidden"] == fact_id_any(undoer.vault, "the train leaves at ten")
    assert result["restored"] == fact_id(undoer.vault, "the train leaves at nine")
    settle(trio, rng)
    for d in trio:
        assert state(d.vault, "the train leaves at nine") == {**state(d.vault, "the train leaves at nine"),
                                                              "forgotten": 0, "superseded": 0}
        assert state(d.vault, "the train leaves at ten")["forgotten"] == 1
        assert state(d.vault, "a tablet memory that shifts the row numbers")["forgotten"] == 0
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)


def fact_id_any(vault: Vault, text: str) -> int:
    row = vault.read(lambda c: c.execute("SELECT id FROM chunks WHERE text = ?", (text,)).fetchone())
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("sent_before_erase", [False, True])
def test_an_erase_rewrites_own_files_without_breaking_operations_that_name_other_memories(
        trio: list[Device], sent_before_erase: bool) -> None:
    """Rewriting this device's files after an erase keeps every other record as it was sent: an operation that
    names a memory (a forget, a correction) still names it by its global id, so it applies everywhere."""
    rng = random.Random(12)
    laptop, desktop, tablet = trio
    connect(trio, rng)
    for text in ("kept and forgotten", "kept and corrected", "CANARY-e2 erased"):
        remember(laptop.vault, text, CLI)
    forgetting = Forgetting(laptop.vault)
    forgetting.forget_fact(fact_id(laptop.vault, "kept and forgotten"))
    forgetting.correct_fact(fact_id(laptop.vault, "kept and corrected"), "kept, corrected by a tool", by="claude")
    if sent_before_erase:
        laptop.run()
    forgetting.erase_fact(fact_id(laptop.vault, "CANARY-e2 erased"))
    settle(trio, rng)
    for d in (desktop, tablet):
        assert state(d.vault, "kept and forgotten")["forgotten"], d.name
        assert state(d.vault, "kept and corrected")["superseded"], d.name
        assert not any(b"CANARY-e2" in t for t in plaintexts(d.folder)), d.name
    assert normalized_export(laptop.vault) == normalized_export(desktop.vault) == normalized_export(tablet.vault)
