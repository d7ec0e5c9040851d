"""DATA-2: export → import into an empty vault → export is identical; erased memories never appear."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_cli
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, correct, pin, remember, save_document
from vodou_desktop.vault import Vault, entities_store, groups

ERASED = "ocelotcanary erased for good"
FORGOTTEN = "a forgotten memory about parsnips"


def _seed(path: Path) -> None:
    with Vault.open(path) as vault:
        first = remember(vault, "the release ships in May", Origin(kind="cli", tool="claude-code"),
                         project="apollo", scope="planning", valid_at="2026-05-01", valid_precision="day")
        correct(vault, first, "the release ships in June")
        pinned = remember(vault, "my name is Ada", Origin(kind="note", url="https://notes.example.com/p?q=1",
                                                         title="Notes", tool="extension"))
        pin(vault, pinned)
        a = remember(vault, "coffee at nine", Origin(kind="cli"), project="apollo")
        b = remember(vault, "Coffee at 9 am", Origin(kind="capture", tier="capture"), project="apollo")
        old = remember(vault, "the office is in Lyon", Origin(kind="cli"))
        new = remember(vault, "the office moved to Paris", Origin(kind="cli"))
        remember(vault, "prefers short answers", Origin(kind="cli"), kind="preference", project="apollo")
        remember(vault, "zeus uses postgres", Origin(kind="mcp", tool="mcp"), project="zeus")
        forgotten = remember(vault, FORGOTTEN, Origin(kind="cli"))
        erased = remember(vault, ERASED, Origin(kind="link", url="https://erase.example.org/x"))
        save_document(vault, "A saved article about herons.\n\nSecond paragraph.",
                      Origin(kind="library", url="https://birds.example.net/herons", title="Herons"),
                      project="apollo")

        def job(conn, change):  # type: ignore[no-untyped-def]
            groups.set_groups(conn, change, [(a, a, True), (b, a, False)])
            groups.supersede(conn, change, old, new)
            ada = entities_store.upsert_entity(conn, change, "Ada")
            entities_store.add_aliases(conn, change, ada, ["ada lovelace"])
            entities_store.link(conn, change, ada, [pinned])

        vault.write(job)
        SiteModes(vault).set_rule("bank.example.com", "off")
        SiteModes(vault).set_rule("docs.example.com", "collect")
        opm = OperatorMemory(vault)
        kept = opm.add("preference", "Answer in French", "chat:1").memory
        opm.correct(kept.id, "Answer in English", "chat:2")
        opm.add("initiative", "Ship 1.0")
        forgetting = Forgetting(vault)
        forgetting.forget_fact(forgotten)
        forgetting.erase_fact(erased)


def test_round_trip_is_identical_and_erased_is_absent(tmp_path: Path) -> None:
    original, copy = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _seed(original)
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    out = run_cli("--vault", str(original), "export", "--format", "jsonl", "--include-forgotten", str(first))
    assert out.code == 0, out.err
    imported = run_cli("--vault", str(copy), "import", "vodou", str(first))
    assert imported.code == 0, imported.err
    assert run_cli("--vault", str(copy), "export", "--include-forgotten", str(second)).code == 0
    assert first.read_text() == second.read_text()

    records = [json.loads(line) for line in first.read_text().splitlines()]
    kinds = {r["type"] for r in records}
    assert {"memory", "document", "entity", "site_rule", "operator_memory", "operator_memory_history",
            "operation"} <= kinds
    memories = {r["text"]: r for r in records if r["type"] == "memory"}
    june = memories["the release ships in June"]
    assert june["revision"] == 2 and memories[
        next(t for t, m in memories.items() if m["ref"] == june["predecessor"])]["superseded_by"] == june["ref"]
    assert june["project"] == "apollo" and june["scope"] == "planning" and june["source"]["tool"] == "claude-code"
    assert june["valid_at"] == "2026-05-01" and june["valid_precision"] == "day"
    ada = memories["my name is Ada"]
    assert ada["pinned"] and ada["source"]["tier"] == "pinned" and ada["pinned_from"]["tier"] == "first_party"
    assert ada["source"]["url"] == "https://notes.example.com/p?q=1" and ada["entities"] == ["Ada"]
    assert memories["Coffee at 9 am"]["group"] == memories["coffee at nine"]["group"] is not None
    assert memories["the office is in Lyon"]["superseded_by"] == memories["the office moved to Paris"]["ref"]
    assert memories["prefers short answers"]["project"] is None  # preferences are always global
    assert memories[FORGOTTEN]["forgotten_at"]
    for path in (first, second, original, copy):
        assert ERASED.encode() not in path.read_bytes()

    # the imported forget can still be undone
    op = memories[FORGOTTEN]["forgotten_by"]
    assert run_cli("--vault", str(copy), "mem", "forget", "--undo", op).code == 0
    assert FORGOTTEN in run_cli("--vault", str(copy), "mem", "list").out


def test_forgotten_left_out_by_default_and_project_scope(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    _seed(path)
    everything = run_cli("--vault", str(path), "export")
    assert everything.code == 0 and FORGOTTEN not in everything.out and "zeus uses postgres" in everything.out
    apollo = run_cli("--vault", str(path), "export", "--project", "apollo")
    assert "zeus uses postgres" not in apollo.out and "coffee at nine" in apollo.out
    assert "the office moved to Paris" in apollo.out  # global memories are part of every project
    md = run_cli("--vault", str(path), "export", "--format", "markdown")
    assert md.code == 0 and "## apollo" in md.out and "the release ships in June" in md.out
    assert "Answer in English" in md.out and "bank.example.com: off" in md.out and ERASED not in md.out


def test_import_refuses_a_vault_that_is_not_empty(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    _seed(path)
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(path), "export", str(dump)).code == 0
    result = run_cli("--vault", str(path), "import", "vodou", str(dump))
    assert result.code == 2 and "empty vault" in result.err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory"}\n')
    assert run_cli("--vault", str(tmp_path / "c.sqlite"), "import", "vodou", str(bad)).code == 2
