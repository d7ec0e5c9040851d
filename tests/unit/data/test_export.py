"""DATA-2: export → import into an empty vault gives the same vault, row for row (ids, threads,
sources, source events and all; embeddings and the keyword index are derived again); erased memories
never appear; into a vault that already holds memories the ids are mapped and the mapping reported."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from tests.support import run_cli
from vodou_desktop.data.export_schema import is_exported_setting
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.extract import Bullet
from vodou_desktop.ingest.remember import Origin, correct, pin, remember, save_document
from vodou_desktop.ingest.window import Entry
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
        # a conversation of three turns, its middle one corrected (the correction stays in the thread)
        turns = [Entry(text, "panel", None, None, f"2026-03-0{i + 1}T10:00:00+00:00", f"t{i}")
                 for i, text in enumerate(("Which trail did you hike?", "The ridge trail above the quarry.",
                                           "See you on Sunday then."))]
        talk = w.capture_conversation(vault, turns, project="apollo", conversation_id="c1",
                                      extractor=lambda text: [Bullet(text, "fact")])
        correct(vault, talk.fact_ids[1], "The ridge trail above the old quarry.")
        # a terminal window whose entries disagree on the project: its input labels are source events
        w.enqueue(vault, [w.Entry("We decided to ship Atlas on Friday.", "cursor", project="atlas"),
                          w.Entry("We use ruff for linting everywhere.", "claude-code")])
        w.flush(vault)

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


# Every table a memory touches; what is derived again on import (vectors, the keyword index) is left out.
TABLES = ("memory_sources", "chunks", "documents", "source_events", "entities", "entity_aliases", "entity_links",
          "operations", "site_rules", "projects", "settings", "operator_memory", "operator_memory_history")
DERIVED = {"chunks": ("embedding", "embed_model")}


def _vault_rows(path: Path) -> dict[str, list[dict[str, object]]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        out = {}
        for table in TABLES:
            names = [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")
                     if r[1] not in DERIVED.get(table, ())]
            rows = [dict(zip(names, row, strict=True))
                    for row in conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY rowid")]
            if table == "settings":
                rows = [r for r in rows if is_exported_setting(r["key"])]  # the rest stays on its computer
            out[table] = rows
        # the operations a memory touches: those that hid it (an erase's record names no exported memory)
        hidden_by = {r["invalidated_by"] for r in [*out["chunks"], *out["documents"]]}
        out["operations"] = [r for r in out["operations"] if r["id"] in hidden_by]
        return out
    finally:
        conn.close()


def test_export_then_import_into_an_empty_vault_gives_the_same_vault(tmp_path: Path) -> None:
    original, copy = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _seed(original)
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(original), "export", "--include-forgotten", str(dump)).code == 0
    imported = run_cli("--vault", str(copy), "import", "vodou", str(dump))
    assert imported.code == 0, imported.err
    assert "every memory kept its id" in imported.out
    before, after = _vault_rows(original), _vault_rows(copy)
    assert all(before[t] for t in ("chunks", "source_events", "entity_links", "operations"))  # the seed has them
    threads = {r["thread_id"] for r in before["chunks"] if r["document_id"] is None}
    assert len(threads) < len([r for r in before["chunks"] if r["document_id"] is None])  # shared threads
    for table in TABLES:
        differences = [(b, {k: (v, a.get(k)) for k, v in b.items() if a.get(k) != v})
                       for b, a in zip(before[table], after[table], strict=False) if a != b]
        assert len(after[table]) == len(before[table]) and not differences, (table, differences[:3])


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


def test_import_into_a_vault_with_memories_maps_the_ids_and_says_so(tmp_path: Path) -> None:
    path, other = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _seed(path)
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(path), "export", str(dump)).code == 0
    with Vault.open(other) as vault:
        remember(vault, "a memory already here", Origin(kind="cli"))
    result = run_cli("--vault", str(other), "import", "vodou", str(dump), "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    exported = {r["id"]: r["text"] for r in records if r["type"] == "memory"}
    assert report["ids_kept"] is False and set(report["memory_ids"]) == {str(i) for i in exported}
    with Vault.open(other) as vault:
        texts = dict(vault.read(lambda c: c.execute("SELECT id, text FROM chunks").fetchall()))
    assert all(texts[new] == exported[int(old)] for old, new in report["memory_ids"].items())
    said = run_cli("--vault", str(other), "import", "vodou", str(dump))
    assert said.code == 0 and "have another id in this vault (it already held memories): #" in said.out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory"}\n')
    assert run_cli("--vault", str(tmp_path / "c.sqlite"), "import", "vodou", str(bad)).code == 2


def test_the_export_of_an_encrypted_vault_says_it_is_not_encrypted(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    with Vault.open(path) as vault:
        remember(vault, "the safe code is 4711", Origin(kind="cli"))
    plain = run_cli("--vault", str(path), "export", str(tmp_path / "plain.jsonl"))
    assert plain.code == 0 and plain.err == ""
    assert run_cli("--vault", str(path), "encrypt").code == 0
    for target in (str(tmp_path / "out.jsonl"), None):
        said = run_cli("--vault", str(path), "export", *([target] if target else []))
        assert said.code == 0
        assert said.err.strip().splitlines() == [
            "vodou: note: your vault is encrypted, but this export is not: keep it somewhere safe and delete it "
            "when done"]


def test_a_version_1_export_still_imports(tmp_path: Path) -> None:
    """Files written before ids were exported: no ids, sources inline, groups numbered 1, 2, …"""
    path = tmp_path / "a.sqlite"
    _seed(path)
    dump = tmp_path / "dump.jsonl"
    assert run_cli("--vault", str(path), "export", str(dump)).code == 0
    old = []
    for line in dump.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "source_event":
            continue
        for key in ("id", "thread_id", "thread_seq", "chunk_ids"):
            record.pop(key, None) if record["type"] in ("memory", "document", "entity") else None
        for src in (record.get("source"), record.get("pinned_from")):
            if isinstance(src, dict):
                src.pop("id")
        if record["type"] == "header":
            record["version"] = 1
        old.append(json.dumps(record))
    v1 = tmp_path / "v1.jsonl"
    v1.write_text("\n".join(old) + "\n")
    result = run_cli("--vault", str(tmp_path / "b.sqlite"), "import", "vodou", str(v1), "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["ids_kept"] is False and report["memory"] == sum(1 for r in old if '"type": "memory"' in r)
    assert "the release ships in June" in run_cli("--vault", str(tmp_path / "b.sqlite"), "mem", "list").out
