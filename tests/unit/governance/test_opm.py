"""Operator-memory lifecycle (OPM-1..3, OPM-6; seed 001): every behaviour the seed reports is a test."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from tests.support import OPM_START, DateClock, total_hits
from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.governance.opm import CATEGORIES, OperatorMemory, canonical_key, category_of
from vodou_desktop.vault import Vault
from vodou_desktop.vault import opm_store as store
from vodou_desktop.vault.clock import to_iso
from vodou_desktop.vault.writer import Change


def history(vault: Vault, memory_id: str | None = None) -> list[store.HistoryRow]:
    return vault.read(lambda c: store.history_rows(c, memory_id))


def current(vault: Vault) -> list[store.MemoryRow]:
    return vault.read(store.list_rows)


# -- categories, ceilings ------------------------------------------------------------------------

def test_categories_have_fixed_salience_ceilings_and_expiry() -> None:
    got = {n: (c.salience, c.ceiling, c.expiry.days) for n, c in CATEGORIES.items()}
    assert got == {"initiative": (3, 1, 30), "preference": (2, 12, 365), "pinned_context": (1, 8, 90)}
    assert category_of("Standing Initiative").name == "initiative"
    assert category_of("pinned").name == "pinned_context"
    with pytest.raises(InvalidInput, match="unknown operator-memory category"):
        category_of("mood")


@pytest.mark.parametrize(("category", "ceiling"), [("preference", 12), ("initiative", 1), ("pinned_context", 8)])
def test_exceeding_a_ceiling_is_refused_and_stores_nothing(opm: OperatorMemory, vault: Vault, category: str,
                                                           ceiling: int) -> None:
    for i in range(ceiling):
        assert opm.add(category, f"{category} number {i} alpha{i}").action == "added"
    with pytest.raises(Conflict, match=f"the ceiling is {ceiling}"):
        opm.add(category, "one too many")
    assert len(current(vault)) == ceiling
    other = "preference" if category != "preference" else "pinned_context"
    assert opm.add(other, "another category still has room").action == "added"


def test_expired_rows_still_count_toward_the_storage_ceiling(opm: OperatorMemory, day_clock: DateClock) -> None:
    opm.add("initiative", "Ship the 1.0 release")
    day_clock.advance(days=31)
    with pytest.raises(Conflict, match="ceiling"):
        opm.add("initiative", "Something else")


# -- stable id, revisions, history -------------------------------------------------------------------

def test_correction_keeps_the_id_and_archives_the_exact_prior_revision(opm: OperatorMemory, vault: Vault,
                                                                       day_clock: DateClock) -> None:
    first = opm.add("preference", "Answer in French", "chat:1").memory
    corrected_at = day_clock.advance(days=3)
    outcome = opm.correct(first.id, "Answer in English", "chat:2")

    assert outcome.action == "corrected"
    now = outcome.memory
    assert (now.id, now.revision, now.predecessor, now.content) == (first.id, 2, 1, "Answer in English")
    assert (now.source_ref, now.original_source_ref) == ("chat:2", "chat:1")
    assert now.expires_at == to_iso(corrected_at + timedelta(days=365))
    [old] = history(vault)
    assert (old.memory_id, old.revision, old.content, old.source_ref) == (first.id, 1, "Answer in French", "chat:1")
    assert (old.successor_revision, old.superseded_at) == (2, to_iso(corrected_at))
    assert [r.id for r in current(vault)] == [first.id]


def test_each_correction_adds_one_history_row(opm: OperatorMemory, vault: Vault) -> None:
    m = opm.add("pinned_context", "Repo on GitHub").memory
    opm.correct(m.id, "Repo on GitLab")
    third = opm.correct(m.id, "Repo on Codeberg").memory
    assert (third.revision, third.predecessor) == (3, 2)
    rows = history(vault, m.id)
    assert [(h.revision, h.successor_revision, h.content) for h in rows] == [
        (1, 2, "Repo on GitHub"), (2, 3, "Repo on GitLab")]


def test_correct_unknown_id_is_not_found(opm: OperatorMemory) -> None:
    with pytest.raises(NotFound, match="no operator memory"):
        opm.correct("opm-nothere", "text")


# -- canonical dedupe and reauthorization ----------------------------------------------------------

def test_canonical_key_ignores_case_whitespace_and_punctuation() -> None:
    assert canonical_key("Use metric units.") == canonical_key("  use   METRIC  units!! ")
    assert canonical_key("Use metric, units") == canonical_key("use metric units")
    assert canonical_key("Use metric units") != canonical_key("Use imperial units")


def test_equivalent_content_in_another_slot_is_refused(opm: OperatorMemory, vault: Vault) -> None:
    kept = opm.add("preference", "Use metric units.").memory
    other = opm.add("preference", "Prefer short answers").memory
    with pytest.raises(Conflict, match=f"already stored as {kept.id}"):
        opm.add("preference", "use   METRIC units!!")
    with pytest.raises(Conflict, match=kept.id):
        opm.correct(other.id, "USE metric units")
    assert opm.get(other.id).memory.revision == 1 and history(vault) == []
    assert len(current(vault)) == 2
    assert opm.add("pinned_context", "Use metric units.").action == "added"  # another category is fine


def test_correcting_a_slot_to_an_equivalent_of_itself_is_a_revision(opm: OperatorMemory) -> None:
    m = opm.add("preference", "use metric units").memory
    assert opm.correct(m.id, "Use metric units.").memory.revision == 2


def test_adding_identical_content_reauthorizes_without_a_revision(opm: OperatorMemory, vault: Vault,
                                                                   day_clock: DateClock) -> None:
    first = opm.add("preference", "Use metric units", "chat:1").memory
    opm.recall()
    later = day_clock.advance(days=100)
    outcome = opm.add("preference", "Use metric units", "chat:7")
    again = outcome.memory
    assert outcome.action == "reauthorized"
    assert (again.id, again.revision, again.predecessor) == (first.id, 1, None)
    assert (again.source_ref, again.original_source_ref, again.created_at) == ("chat:7", "chat:1", first.created_at)
    assert again.expires_at == to_iso(later + timedelta(days=365))
    assert again.reauthorized_at == to_iso(later) and again.last_used_at is None
    assert history(vault) == [] and len(current(vault)) == 1


def test_reauthorize_renews_expiry_clears_last_use_and_keeps_revision_and_provenance(
        opm: OperatorMemory, vault: Vault, day_clock: DateClock) -> None:
    m = opm.add("pinned_context", "Staging is at staging.example.test", "ticket:1").memory
    m = opm.correct(m.id, "Staging is at stage2.example.test", "ticket:2").memory
    day_clock.advance(days=80)
    opm.recall()
    assert opm.get(m.id).memory.last_used_at is not None
    renewed_at = day_clock.advance(days=20)  # expired by now (90 days)
    assert opm.get(m.id).status == "expired"

    r = opm.reauthorize(m.id, "ticket:3")
    assert (r.id, r.revision, r.predecessor, r.content) == (m.id, 2, 1, m.content)
    assert (r.source_ref, r.original_source_ref) == ("ticket:3", "ticket:1")
    assert r.reauthorized_at == to_iso(renewed_at) and r.last_used_at is None
    assert r.expires_at == to_iso(renewed_at + timedelta(days=90))
    assert opm.get(m.id).status == "active"
    assert len(history(vault)) == 1  # the correction's archive; reauthorization added none


def test_correct_with_unchanged_content_is_a_reauthorization(opm: OperatorMemory, vault: Vault) -> None:
    m = opm.add("preference", "Prefer tables").memory
    outcome = opm.correct(m.id, "Prefer tables", "chat:9")
    assert outcome.action == "reauthorized"
    assert (outcome.memory.revision, outcome.memory.source_ref) == (1, "chat:9")
    assert history(vault) == []


def test_reauthorize_unknown_id_is_not_found(opm: OperatorMemory) -> None:
    with pytest.raises(NotFound):
        opm.reauthorize("opm-0000000000")


@pytest.mark.parametrize("text", ["", "   ", "!!! ...", "x" * 2001])
def test_bad_content_is_refused_and_nothing_is_stored(opm: OperatorMemory, vault: Vault, text: str) -> None:
    with pytest.raises(InvalidInput):
        opm.add("preference", text)
    assert current(vault) == []


def test_bad_source_ref_is_refused(opm: OperatorMemory, vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="source ref"):
        opm.add("preference", "fine text", "two\nlines")
    assert current(vault) == []


def test_lone_surrogates_are_stored_as_replacement_characters(opm: OperatorMemory) -> None:
    m = opm.add("preference", "emoji \ud83d half").memory
    assert m.content == "emoji \ufffd half"


# -- expiry and recall ----------------------------------------------------------------------------------

def test_expired_rows_are_excluded_from_recall_but_listed_for_their_owner(opm: OperatorMemory, vault: Vault,
                                                                          day_clock: DateClock) -> None:
    pinned = opm.add("pinned_context", "Deploy key rotates monthly").memory
    pref = opm.add("preference", "Use metric units").memory
    day_clock.advance(days=90)  # exactly at expiry: expired
    assert [m.id for m in opm.recall()] == [pref.id]
    listed = {o.memory.id: o.status for o in opm.list_memories()}
    assert listed == {pinned.id: "expired", pref.id: "active"}
    assert opm.get(pinned.id).memory.last_used_at is None  # an expired row is never touched by recall


def test_expiry_can_be_configured(vault: Vault, day_clock: DateClock) -> None:
    opm = OperatorMemory(vault, clock=day_clock, expiry={"preference": timedelta(days=1)})
    opm.add("preference", "Short lived")
    day_clock.advance(hours=23)
    assert len(opm.recall()) == 1
    day_clock.advance(hours=2)
    assert opm.recall() == []


def test_recall_orders_by_salience_then_recency_takes_eight_and_marks_only_those(
        opm: OperatorMemory, vault: Vault, day_clock: DateClock) -> None:
    ids: dict[str, list[str]] = {"initiative": [], "preference": [], "pinned_context": []}
    for category, n in (("pinned_context", 8), ("preference", 12), ("initiative", 1)):
        for i in range(n):
            day_clock.advance(minutes=1)
            ids[category].append(opm.add(category, f"{category} entry {i} word{i}").memory.id)
    day_clock.advance(minutes=1)
    opm.reauthorize(ids["preference"][0])  # reauthorized: now the most recent preference
    recall_at = day_clock.advance(minutes=1)

    got = [m.id for m in opm.recall()]
    newest_prefs = [ids["preference"][0], *reversed(ids["preference"][5:])]
    assert got == [ids["initiative"][0], *newest_prefs[:7]]
    used = {r.id for r in current(vault) if r.last_used_at == to_iso(recall_at)}
    assert used == set(got)
    assert all(r.last_used_at is None for r in current(vault) if r.id not in used)


def test_recall_limit_cannot_be_raised_past_eight(opm: OperatorMemory) -> None:
    for i in range(12):
        opm.add("preference", f"preference {i} w{i}")
    assert len(opm.recall(limit=50)) == 8
    assert len(opm.recall(limit=3)) == 3


def test_recall_sql_never_names_the_history_table() -> None:
    for sql in (store.RECALL_SELECT, store.RECALL_TOUCH):
        assert store.HISTORY_TABLE not in sql and "history" not in sql.lower()


def test_recall_reads_and_writes_only_current_rows(opm: OperatorMemory, vault: Vault, vault_path: Path) -> None:
    m = opm.add("preference", "Answer in French").memory
    opm.correct(m.id, "Answer in English")
    conn = apsw.Connection(str(vault_path))
    touched: set[tuple[int, str]] = set()

    def authorizer(op: int, p1: str | None, p2: str | None, db: str | None, trigger: str | None) -> int:
        if op in (apsw.SQLITE_READ, apsw.SQLITE_UPDATE, apsw.SQLITE_INSERT, apsw.SQLITE_DELETE) and p1:
            touched.add((op, p1))
        return apsw.SQLITE_OK

    conn.authorizer = authorizer
    with conn:
        rows = store.recall_rows(conn, Change(), to_iso(OPM_START), 8)
    conn.close()
    assert [r.content for r in rows] == ["Answer in English"]
    assert {table for _, table in touched} == {store.TABLE}


def test_recall_works_without_the_history_table(opm: OperatorMemory, vault_path: Path) -> None:
    m = opm.add("preference", "Answer in French").memory
    opm.correct(m.id, "Answer in English")
    other = apsw.Connection(str(vault_path))
    other.execute(f"DROP TABLE {store.HISTORY_TABLE}")
    other.close()
    assert [r.content for r in opm.recall()] == ["Answer in English"]


# -- forget, forget-all, export -------------------------------------------------------------------------

def test_exact_forget_deletes_the_lineage_and_only_it(opm: OperatorMemory, vault: Vault, vault_path: Path) -> None:
    a = opm.add("preference", "Canary-A-one alpha").memory
    opm.correct(a.id, "Canary-A-two alpha")
    opm.correct(a.id, "Canary-A-three alpha")
    b = opm.add("preference", "Canary-B-one beta").memory
    opm.correct(b.id, "Canary-B-two beta")
    b_before, b_history_before = opm.get(b.id).memory, history(vault, b.id)

    assert opm.erase(a.id) == {"id": a.id, "current": 1, "history": 2}

    with pytest.raises(NotFound):
        opm.get(a.id)
    assert history(vault, a.id) == []
    assert opm.get(b.id).memory == b_before and history(vault, b.id) == b_history_before
    for gone in ("Canary-A-one", "Canary-A-two", "Canary-A-three"):
        assert total_hits(vault_path, gone) == 0, gone
    assert total_hits(vault_path, "Canary-B-one") > 0 and total_hits(vault_path, "Canary-B-two") > 0


def test_forget_unknown_id_deletes_nothing(opm: OperatorMemory, vault: Vault) -> None:
    opm.add("preference", "Keep me")
    with pytest.raises(NotFound):
        opm.erase("opm-unknown")
    assert len(current(vault)) == 1


def test_forget_all_deletes_every_current_and_historical_row(opm: OperatorMemory, vault: Vault,
                                                             vault_path: Path) -> None:
    a = opm.add("preference", "Canary-all-one").memory
    opm.correct(a.id, "Canary-all-two")
    opm.add("initiative", "Canary-all-three")
    assert opm.erase_all() == {"current": 2, "history": 1}
    assert current(vault) == [] and history(vault) == []
    for gone in ("Canary-all-one", "Canary-all-two", "Canary-all-three"):
        assert total_hits(vault_path, gone) == 0, gone
    assert opm.erase_all() == {"current": 0, "history": 0}


def test_export_holds_current_and_history_as_json(opm: OperatorMemory, day_clock: DateClock) -> None:
    a = opm.add("preference", "Answer in French", "chat:1").memory
    opm.correct(a.id, "Answer in English", "chat:2")
    opm.add("pinned_context", "Old pin")
    day_clock.advance(days=91)
    data = json.loads(json.dumps(opm.export()))
    assert data["format"] == "vodou-operator-memory/1"
    status = {m["content"]: m["status"] for m in data["memories"]}
    assert status == {"Answer in English": "active", "Old pin": "expired"}
    assert [(h["memory_id"], h["revision"], h["content"]) for h in data["history"]] == [(a.id, 1, "Answer in French")]


def test_export_reads_current_and_history_in_one_transaction(opm: OperatorMemory, vault: Vault) -> None:
    """A correction that commits between the export's two reads must not produce a split view."""
    m = opm.add("preference", "Answer in French").memory
    conn = vault.reader()
    fired: list[str] = []

    def correct_between_reads(cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
        if store.HISTORY_TABLE in sql and "SELECT" in sql and not fired:
            fired.append(sql)
            opm.correct(m.id, "Answer in English")  # commits on the writer thread
        return True

    conn.exec_trace = correct_between_reads
    try:
        snapshot = opm.export()
    finally:
        conn.exec_trace = None
    assert fired, "the export never read the history table"
    [row] = snapshot["memories"]
    assert (row["revision"], row["content"], snapshot["history"]) == (1, "Answer in French", [])
    after = opm.export()
    assert after["memories"][0]["revision"] == 2 and len(after["history"]) == 1


def test_two_vault_handles_racing_for_the_last_slot_store_one(vault_path: Path, vault: Vault) -> None:
    """Ceiling and dedupe are checked inside the write transaction, so a second process (the CLI
    beside the app) cannot slip past them."""
    second = Vault.open(vault_path)
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def add(handle: Vault, text: str) -> None:
        start.wait()
        try:
            outcomes.append(OperatorMemory(handle).add("initiative", text).action)
        except Conflict:
            outcomes.append("refused")

    try:
        threads = [threading.Thread(target=add, args=(h, t)) for h, t in ((vault, "Plan A"), (second, "Plan B"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        second.close()
    assert sorted(outcomes) == ["added", "refused"]
    assert len(current(vault)) == 1
