"""Work on many memories as one action each (UI-7), and one undo for every reversible action: forget,
correct, move, pin, import — never erase, and never bringing back what another operation hid (GOV-6)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.support import total_hits
from vodou_desktop.data.export import import_records, read_jsonl
from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.governance.edits import Edits
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.journal import ELSEWHERE, FINAL, UNDONE, Journal
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

VISIBLE = FactFilter(project=ALL_PROJECTS)
EVERYTHING = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


@pytest.fixture
def edits(vault: Vault) -> Edits:
    return Edits(vault, Forgetting(vault, copies=False))


def _add(vault: Vault, n: int, project: str | None = "inbox", text: str = "note", url: str | None = None) -> list[int]:
    return [remember(vault, f"{text} {i}", Origin(kind="note" if url else "cli", url=url), project=project)
            for i in range(n)]


def _visible(vault: Vault) -> set[int]:
    return {f.id for f in vault.read(lambda c: q.list_facts(c, VISIBLE, limit=10_000))}


def test_forgetting_many_is_one_operation_and_one_undo(vault: Vault, edits: Edits) -> None:
    ids = _add(vault, 12)
    done = edits.forget(ids[:10])
    assert (done["facts_hidden"], done["already_hidden"], done["ids"]) == (10, 0, ids[:10])
    assert _visible(vault) == set(ids[10:])
    journal = Journal(vault)
    assert journal.last().undo_title == "Undo Forget 10 memories"  # type: ignore[union-attr]
    undone = journal.undo()
    assert undone.result["facts_restored"] == 10 and _visible(vault) == set(ids)
    assert undone.sentence == "undid “Forget 10 memories” (just now): 10 memories visible again"
    assert journal.last() is None  # nothing left to undo


def test_undoing_a_forget_never_brings_back_what_another_forget_covers(vault: Vault, edits: Edits) -> None:
    ids = _add(vault, 3) + _add(vault, 2, text="page", url="https://birds.example/p")
    first = edits.forget([ids[0], ids[3]])["op"]
    second = edits.forget([ids[0], ids[1]])  # #0 is hidden already: this forget names it too
    assert second["already_hidden"] == 1
    site = Forgetting(vault).forget_host("birds.example")  # covers #3 (hidden by the first) and #4
    Journal(vault).undo(first)
    assert _visible(vault) == {ids[2]}  # #0 stays hidden by the second forget, #3 by the site's
    Journal(vault).undo(site["op"])
    assert _visible(vault) == {ids[2], ids[3], ids[4]}
    Journal(vault).undo(second["op"])
    assert _visible(vault) == set(ids)


def test_moving_many_keeps_their_ids_and_one_undo_puts_them_back(vault: Vault, edits: Edits) -> None:
    ids = _add(vault, 12)
    _add(vault, 1, project="birds")
    with pytest.raises(NotFound, match="no project 'brids'"):
        edits.move(ids, "brids")  # a typo never starts a project
    assert "birds" in edits.projects() and "brids" not in edits.projects()
    done = edits.move(ids, "birds")
    assert (done["moved"], done["ids"]) == (12, ids)
    assert {vault.read(lambda c, i=i: q.get_fact(c, i, VISIBLE)).project for i in ids} == {"birds"}
    journal = Journal(vault)
    assert journal.last().title == "Move 12 memories to birds"  # type: ignore[union-attr]
    edits.correct(ids[0], "note 0, corrected after the move")  # changed since: left as it is
    journal.undo(journal.actions()[1].op)
    projects = {i: vault.read(lambda c, i=i: q.get_fact(c, i, VISIBLE)).project for i in ids}
    assert projects == {**{i: "inbox" for i in ids[1:]}, ids[0]: "birds"}
    assert _visible(vault) >= set(ids)
    with pytest.raises(Conflict, match="exists already"):
        edits.move(ids[1:3], "birds", new_project=True)
    started = edits.move(ids[1:3], "owls", new_project=True)
    assert started["new_project"] and journal.last().title == "Move 2 memories to owls (a new project)"  # type: ignore[union-attr]


def test_pin_many_and_undo(vault: Vault, edits: Edits) -> None:
    ids = _add(vault, 4)
    edits.pin(ids[:1])
    done = edits.pin(ids)
    assert (done["changed"], done["unchanged"]) == (3, 1)
    assert Journal(vault).last().title == "Pin 3 memories"  # type: ignore[union-attr]
    Journal(vault).undo()
    tiers = [vault.read(lambda c, i=i: q.get_fact(c, i, VISIBLE)).tier for i in ids]
    assert tiers == ["pinned", "first_party", "first_party", "first_party"]  # the one pinned before stays


def test_a_correction_keeps_its_id_and_undo_does_not_show_what_a_forget_hid(vault: Vault, edits: Edits) -> None:
    [memory] = _add(vault, 1)
    done = edits.correct(memory, "note 0, corrected")
    assert (done["id"], done["revision"]) == (memory, 2)
    forgot = edits.forget([memory])
    with pytest.raises(Conflict, match="hidden by another operation"):
        Journal(vault).undo(done["op"])
    assert _visible(vault) == set()  # neither revision came back
    Journal(vault).undo(forgot["op"])
    Journal(vault).undo(done["op"])
    assert vault.read(lambda c: q.get_fact(c, memory, VISIBLE)).text == "note 0"


def test_erasing_many_is_one_final_action_and_leaves_no_text(vault: Vault, edits: Edits) -> None:
    ids = [remember(vault, f"CANARY-{i} to erase", Origin(kind="cli")) for i in range(3)]
    edits.correct(ids[0], "CANARY-0b its second text")
    kept = remember(vault, "a memory that stays", Origin(kind="cli"))
    done = edits.erase(ids)
    assert (done["memories_erased"], done["facts_erased"]) == (3, 4)
    assert _visible(vault) == {kept}
    assert total_hits(vault.path, "CANARY-") == 0  # text, index and WAL: every revision's too
    action = Journal(vault).actions()[0]
    assert (action.title, action.state) == ("Erase 3 memories", FINAL)
    with pytest.raises(InvalidInput, match="cannot be undone"):
        Journal(vault).undo(action.op)


def test_exporting_a_selection_writes_those_memories_and_their_history(vault: Vault, edits: Edits,
                                                                       tmp_path: Path) -> None:
    ids = _add(vault, 5)
    edits.correct(ids[1], "note 1, corrected")
    out = io.StringIO()
    counts = edits.export([ids[1], ids[3]], out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert counts["memory"] == 3 and {r["type"] for r in records} == {"header", "memory"}
    assert sorted(r["text"] for r in records if r["type"] == "memory") == ["note 1", "note 1, corrected", "note 3"]
    path = tmp_path / "selected.jsonl"
    edits.export([ids[1], ids[3]], path)
    with Vault.open(tmp_path / "other.sqlite") as other:
        import_records(other, read_jsonl(path))
        shown = other.read(lambda c: q.list_facts(c, VISIBLE, limit=10))
        assert sorted(f.text for f in shown) == ["note 1, corrected", "note 3"]
        assert other.read(lambda c: q.revision_history(c, ids[1], EVERYTHING))[0].text == "note 1"


def test_an_import_is_one_undo(vault: Vault, tmp_path: Path) -> None:
    mine = _add(vault, 1, project=None)
    with Vault.open(tmp_path / "source.sqlite") as source:
        _add(source, 30, text="imported")
        out = io.StringIO()
        Edits(source).export(list(range(1, 31)), out)
    path = tmp_path / "in.jsonl"
    path.write_text(out.getvalue())
    report = import_records(vault, read_jsonl(path), "in.jsonl")
    assert report.op is not None and len(_visible(vault)) == 31
    journal = Journal(vault)
    assert journal.last().title == "Import 30 memories from in.jsonl"  # type: ignore[union-attr]
    undone = journal.undo()
    assert undone.result["facts_hidden"] == 30 and _visible(vault) == set(mine)
    assert [a.state for a in journal.actions()] == [UNDONE]


def test_an_action_made_on_another_computer_is_undone_there(vault: Vault, edits: Edits) -> None:
    ids = _add(vault, 2)
    _add(vault, 1, project="birds")
    done = edits.move(ids, "birds")
    vault.write(lambda c, ch: c.execute("DELETE FROM operation_items WHERE op = ?", (done["op"],)))  # as synced
    journal = Journal(vault)
    assert journal.actions()[0].state == ELSEWHERE and journal.last() is None
    with pytest.raises(Conflict, match="another computer"):
        journal.undo(done["op"])
    assert [a.state for a in Journal(vault).actions()] == [ELSEWHERE]
