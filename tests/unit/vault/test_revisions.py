"""Corrections and moves keep the memory's id and its history; pins outrank and unpinning restores the
provenance; revision chains written before (a new id per revision) are given back their first id."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support import run_cli, total_hits
from vodou_desktop.errors import Conflict
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.journal import Journal
from vodou_desktop.ingest.remember import Origin, correct, move, pin, remember
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault, audits
from vodou_desktop.vault import query as q
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.facts import insert_fact, set_embeddings
from vodou_desktop.vault.migrations import migrate
from vodou_desktop.vault.schema import MIGRATIONS
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

EVERYTHING = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def _get(vault: Vault, fact_id: int, f: FactFilter = EVERYTHING):  # type: ignore[no-untyped-def]
    return vault.read(lambda c: q.get_fact(c, fact_id, f))


def test_a_correction_keeps_the_id_and_the_old_text_is_history_never_searched(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    memory = remember(vault, "the gate code is 1234", Origin(kind="note", url="https://home.example/g", title="G"),
                      project="home")
    remember(vault, "an unrelated memory written after it", Origin(kind="cli"))
    saved = _get(vault, memory).created_at
    assert correct(vault, memory, "the gate code is 9876") == memory
    fact = _get(vault, memory, FactFilter(project="home"))
    assert (fact.text, fact.revision, fact.project, fact.source_url, fact.created_at) == (
        "the gate code is 9876", 2, "home", "https://home.example/g", saved)  # its place in a list is kept
    previous = _get(vault, fact.predecessor_id)  # type: ignore[arg-type]
    assert previous.id != memory and previous.superseded_by == memory and previous.text == "the gate code is 1234"
    assert [r.fact.id for r in keyword_search.search("gate code", FactFilter(project="home"))] == [memory]
    assert keyword_search.search("1234", FactFilter(project=ALL_PROJECTS)) == []
    assert vault.write(audits.fts_integrity) is None  # the keyword index followed the row to its new id
    with pytest.raises(Conflict, match=f"earlier revision of memory #{memory}"):
        correct(vault, previous.id, "again")
    assert correct(vault, memory, "the gate code is 5555") == memory  # and again: still the same id
    chain = [f.text for f in vault.read(lambda c: q.revision_history(c, memory, EVERYTHING))]
    assert chain == ["the gate code is 1234", "the gate code is 9876", "the gate code is 5555"]


def test_the_vector_index_follows_a_correction_and_an_undo(vault: Vault) -> None:
    """The old revision's vector leaves the memory's id with it; the memory's new text waits for its own."""
    index = VectorIndex(vault, model="m")
    memory = remember(vault, "the boat is blue", Origin(kind="cli"))
    first = np.eye(8, dtype=np.float32)[0]
    vault.write(lambda c, ch: set_embeddings(c, ch, [(memory, first)], model="m"))
    index.load()
    assert [i for i, _ in index.top(first, 1)] == [memory]
    correct(vault, memory, "the boat is red")
    old = _get(vault, memory).predecessor_id
    assert [i for i, _ in index.top(first, 1)] == [old]  # the old text's vector, under the old text's id
    assert _get(vault, memory).has_embedding is False  # the new text is embedded afresh
    Journal(vault).undo()  # the correction: the old text (and its vector) back under the memory's id
    assert _get(vault, memory).text == "the boat is blue"
    assert [i for i, _ in index.top(first, 1)] == [memory]
    index.close()


def test_a_move_keeps_the_id_its_vector_and_its_place_in_the_conversation(vault: Vault) -> None:
    def job(conn, change):  # type: ignore[no-untyped-def]
        src = stamp_source(conn, change, kind="turn", tier="capture")
        ids = [insert_fact(conn, change, text=f"turn {i}", source_id=src, project="A") for i in range(3)]
        conn.execute("UPDATE chunks SET thread_id = ?, thread_seq = id - ? WHERE id IN (?, ?, ?)",
                     (ids[0], ids[0], *ids))
        set_embeddings(conn, change, [(i, np.eye(8, dtype=np.float32)[i]) for i in ids], model="m")
        return ids

    turns = vault.write(job)
    vault.write(lambda c, ch: c.execute("INSERT INTO projects(name, created_at) VALUES ('B', 'now')"))
    assert move(vault, turns[1], "B") == turns[1]
    moved = _get(vault, turns[1])
    assert (moved.project, moved.revision, moved.has_embedding) == ("B", 2, True)
    neighbours = vault.read(lambda c: q.thread_neighbour_ids(c, [turns[1]], FactFilter(project=ALL_PROJECTS)))
    assert [(off, n) for _, off, n in neighbours] == [(-1, turns[0]), (1, turns[2])]


def test_pinned_fact_outranks_and_unpin_restores_source(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    a = remember(vault, "the router reboots nightly", Origin(kind="cli", tier="import"))
    b = remember(vault, "the router reboots nightly", Origin(kind="cli", tier="first_party"))
    assert [r.fact.id for r in keyword_search.search("router reboots")] == [b, a]
    assert pin(vault, a) is True and pin(vault, a) is False
    ranked = keyword_search.search("router reboots")
    assert [r.fact.id for r in ranked] == [a, b] and ranked[0].factors["tier"] == "pinned"
    assert pin(vault, a, False) is True
    assert _get(vault, a).tier == "import"
    assert vault.reader().execute("SELECT count(*) FROM memory_sources WHERE tier = 'pinned'").fetchone()[0] == 0


def test_a_pinned_memory_stays_pinned_when_corrected_and_can_be_unpinned(vault: Vault) -> None:
    memory = remember(vault, "the spare key is under the mat", Origin(kind="cli", tier="import"))
    pin(vault, memory)
    correct(vault, memory, "the spare key is under the flower pot")
    assert _get(vault, memory).tier == "pinned"
    assert pin(vault, memory, False) is True and _get(vault, memory).tier == "import"


def test_cli_correct_keeps_the_id_and_show_has_the_history(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    v = ["--vault", str(vault.path)]
    remember(vault, "bins go out on Tuesday", Origin(kind="cli"))
    fixed = json.loads(run_cli(*v, "mem", "correct", "1", "bins go out on Wednesday", "--json").out)
    assert (fixed["id"], fixed["revision"], fixed["text"]) == (1, 2, "bins go out on Wednesday")
    shown = run_cli(*v, "mem", "show", "1")
    assert shown.code == 0 and shown.out.splitlines()[1].strip() == "bins go out on Wednesday"
    assert "History (never recalled):" in shown.out and "bins go out on Tuesday" in shown.out
    assert json.loads(run_cli(*v, "mem", "pin", "1", "--json").out)["changed"] == 1
    assert _get(vault, 1).tier == "pinned"
    missing = run_cli(*v, "mem", "correct", "99", "x")
    assert missing.code == 2 and "no memory with id 99" in missing.err


def test_moving_a_forgotten_memory_is_refused(keyword_search: SearchService) -> None:
    """A move writes a new revision from the old one's text: moving a forgotten memory would show its
    text again."""
    vault = keyword_search.vault
    fact = remember(vault, "the locker combination is 4711", Origin(kind="cli"), project="gym")
    remember(vault, "home exists", Origin(kind="cli"), project="home")
    Forgetting(vault).forget_fact(fact)
    with pytest.raises(Conflict, match="forgotten"):
        move(vault, fact, "home")
    assert keyword_search.search("locker combination", FactFilter(project=ALL_PROJECTS)) == []
    assert vault.read(lambda c: q.count_facts(c, EVERYTHING)) == 2


def test_erasing_a_corrected_memory_leaves_none_of_its_texts(vault: Vault) -> None:
    memory = remember(vault, "CANARY-first-revision of the plan", Origin(kind="cli"))
    correct(vault, memory, "CANARY-second-revision of the plan")
    correct(vault, memory, "the final plan")
    Forgetting(vault, copies=False).erase_fact(memory)
    assert vault.read(lambda c: q.count_facts(c, EVERYTHING)) == 0
    assert total_hits(vault.path, "CANARY-first-revision") == total_hits(vault.path, "CANARY-second-revision") == 0


# -- vaults written before: a correction gave the memory a new id ------------------------------------

def _old_style_vault(path: Path) -> tuple[int, int]:
    """A vault at schema 0005 holding a memory corrected the way Vodou did then: #1 superseded by #3."""
    conn = open_connection(path)
    migrate(conn, path, MIGRATIONS[:5])
    change = Change()
    conn.execute("BEGIN")
    src = stamp_source(conn, change, kind="cli", tier="first_party")

    def old_row(text: str, predecessor: int | None = None, revision: int = 1) -> int:
        # the columns of schema 0005, as that version wrote them (the write path of today knows later ones)
        conn.execute("INSERT INTO chunks(text, kind, source_id, created_at, predecessor_id, revision, sync_id)"
                     " VALUES (?, 'fact', ?, '2026-01-01T00:00:00+00:00', ?, ?, lower(hex(randomblob(16))))",
                     (text, src, predecessor, revision))
        return int(conn.last_insert_rowid())

    first = old_row("the dentist is on Friday")
    old_row("the car needs new tyres")
    new = old_row("the dentist is on Monday", first, 2)
    conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = 'then' WHERE id = ?", (new, first))
    conn.execute("INSERT INTO operations(id, kind, target, detail, created_at) VALUES ('op-old', 'correct_fact', ?,"
                 " ?, 'then')", (str(new), json.dumps({"facts": 1, "replaces": first, "tool": "claude"})))
    conn.execute("COMMIT")
    conn.close()
    return first, new


def test_an_old_vaults_corrections_are_shown_under_the_memorys_first_id(vault_path: Path) -> None:
    first, new = _old_style_vault(vault_path)
    with Vault.open(vault_path) as vault:
        current = _get(vault, first)
        assert (current.text, current.revision, current.superseded_by) == ("the dentist is on Monday", 2, None)
        history = _get(vault, new)
        assert (history.text, history.superseded_by) == ("the dentist is on Friday", first)
        assert current.predecessor_id == new
        assert vault.write(audits.fts_integrity) is None
        op = vault.read(lambda c: c.execute("SELECT target, detail FROM operations WHERE id = 'op-old'").fetchone())
        assert (op[0], json.loads(op[1])["replaces"]) == (str(first), new)  # the operation names the same rows
        assert Forgetting(vault).undo("op-old")["id"] == first  # and its undo still works, under the same id
        assert _get(vault, first).text == "the dentist is on Friday"


def test_a_relabelled_row_keeps_foreign_keys_sound(vault: Vault) -> None:
    memory = remember(vault, "the plant needs water on Sundays", Origin(kind="cli"))
    vault.write(lambda c, ch: (c.execute("INSERT INTO entities(id, name, created_at) VALUES (1, 'Plant', 'now')"),
                               c.execute("INSERT INTO entity_links(entity_id, chunk_id) VALUES (1, ?)", (memory,))))
    correct(vault, memory, "the plant needs water on Saturdays")
    conn = vault.reader()
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    links = conn.execute("SELECT chunk_id FROM entity_links").fetchall()
    assert [r[0] for r in links] == [_get(vault, memory).predecessor_id]  # the link stays with the text it was on
