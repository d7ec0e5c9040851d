"""Tests that each kill a mutation the rest of the suite let through (one test per mutation)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.unit.governance.test_policy_invariant import sql_trace
from vodou_desktop.cli.output import fact_line
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.page_memory import PageMemory
from vodou_desktop.governance.recall import render_recall_block
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.dedupe import elect
from vodou_desktop.ingest.entities import extract_entities
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.pages import page_key
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import set_page_link
from vodou_desktop.vault.retraction import reelect_canonicals
from vodou_desktop.vault.revisions import correct_fact
from vodou_desktop.vault.writer import Change

from .conftest import add_fact

SITE = "site.example"
PAGE_A, PAGE_B = f"https://{SITE}/a", f"https://{SITE}/b"


def get(vault: Vault, fact_id: int) -> Fact:
    return vault.read(lambda c: q.get_fact(c, fact_id, FactFilter(project=ALL_PROJECTS, include_superseded=True)))


# 1. a day-precision fact is a calendar day everywhere it is shown, never an instant ("18h")
def test_a_day_precision_fact_reads_today_in_the_cli_and_the_recall_block(vault: Vault) -> None:
    midnight = datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0).isoformat()
    fact = get(vault, remember(vault, "Daily log: watered the ferns", Origin(kind="cli"), valid_at=midnight,
                               valid_precision="day"))
    assert fact.valid_precision == "day"
    assert fact_line(fact).endswith(", today")
    assert f"[#{fact.id}, today]" in render_recall_block([], [fact]).text


# 3. a correction keeps a manual page link on the new revision
def test_a_correction_keeps_the_manual_page_link(vault: Vault) -> None:
    fact_id = add_fact(vault, "The guide says calibrate in spring")
    vault.write(lambda c, ch: set_page_link(c, ch, fact_id, PAGE_A, "manual"))
    new_id = vault.write(lambda c, ch: correct_fact(c, ch, fact_id, "The guide says calibrate in autumn"))
    new = get(vault, new_id)
    assert (new.page_url, new.page_set_by) == (PAGE_A, "manual")
    on_page = vault.read(lambda c: q.facts_for_page(c, page_key(PAGE_A), FactFilter(project=ALL_PROJECTS)))
    assert [f.id for f in on_page] == [new_id]


# 4. a Library document from page A does not turn page B of the same site green
def test_a_library_document_turns_only_its_own_page_green(page_memory: PageMemory, sites: SiteModes) -> None:
    sites.set_rule(SITE, "collect")
    page_c = f"https://{SITE}/c"
    assert page_memory.probe(page_c)["state"] == "none"  # cached before the save
    page_memory.library(PAGE_A, "Page A", text="Chapter one about widgets.")
    assert page_memory.probe(PAGE_A)["state"] == "green"
    assert page_memory.probe(PAGE_B)["state"] == "none"  # read fresh after the save
    assert page_memory.probe(page_c)["state"] == "none"
    assert page_memory.probe(f"https://{SITE}/a?page=2")["state"] == "none"


# 5. the operator-memory list with history is one consistent snapshot: one read transaction
def test_list_memories_with_history_reads_in_one_transaction(vault: Vault) -> None:
    opm = OperatorMemory(vault)
    added = opm.add("preference", "Answer in British English").memory.id
    opm.correct(added, "Answer in British English with metric units", source_ref="test")
    with sql_trace(vault) as statements:
        listed = opm.list_memories(include_history=True)
    assert [len(m.history) for m in listed] == [1]
    begins = [i for i, s in enumerate(statements) if s.strip().upper().startswith("BEGIN")]
    commits = [i for i, s in enumerate(statements) if s.strip().upper().startswith(("COMMIT", "END"))]
    assert len(begins) == 1 and len(commits) == 1, statements
    reads = [i for i, s in enumerate(statements) if s.lstrip().upper().startswith("SELECT")]
    assert reads and begins[0] < min(reads) and max(reads) < commits[0]


# 9. a stored alias goes when its token shows up lowercase; "rose bush" never links to Rose Bush
def test_a_stored_alias_is_dropped_once_its_token_is_seen_lowercase(vault: Vault) -> None:
    jane = remember(vault, "Met Jane Doe at the sprint.", Origin(kind="cli"))
    extract_entities(vault)
    assert aliases(vault) == {"Jane Doe": ["Doe", "Jane"]}
    remember(vault, "A doe and her fawn crossed the road.", Origin(kind="cli"))
    later = remember(vault, "Doe prefers email.", Origin(kind="cli"))
    extract_entities(vault)
    assert aliases(vault) == {"Jane Doe": ["Jane"]}
    assert linked(vault, "Jane Doe") == [jane] and later not in linked(vault, "Jane Doe")


def test_lowercase_rose_bush_never_links_to_the_person(vault: Vault) -> None:
    person = remember(vault, "Met Rose Bush at the fair.", Origin(kind="cli"))
    remember(vault, "the rose bush by the door needs water", Origin(kind="cli"))
    extract_entities(vault)
    assert aliases(vault) == {"Rose Bush": []}
    assert linked(vault, "Rose Bush") == [person]


def aliases(vault: Vault) -> dict[str, list[str]]:
    from vodou_desktop.vault import entities_store as es

    return {name: sorted(al) for _, name, al in vault.read(es.all_entities)}


def linked(vault: Vault, name: str) -> list[int]:
    sql = ("SELECT l.chunk_id FROM entity_links l JOIN entities e ON e.id = l.entity_id WHERE e.name = ?"
           " ORDER BY l.chunk_id")
    return [int(r[0]) for r in vault.read(lambda c: list(c.execute(sql, (name,))))]


# 10. typing suggestions in project A never return a project-B fact
def test_suggestions_in_a_project_stay_behind_its_wall(page_memory: PageMemory, sites: SiteModes,
                                                       vault: Vault) -> None:
    sites.set_rule(SITE, "collect")
    in_a = add_fact(vault, "widgets calibration for project A", project="alpha")
    add_fact(vault, "widgets calibration for project B", project="beta")
    shared = add_fact(vault, "widgets calibration for everyone")
    found = {f["id"] for f in page_memory.suggest(PAGE_A, "widgets calib", project="alpha")}
    assert found == {in_a, shared}


# 11. a global (no-project) Library document is in match and in the Library inside a project
def test_a_global_library_document_is_visible_inside_a_project(page_memory: PageMemory, sites: SiteModes,
                                                              vault: Vault) -> None:
    sites.set_rule(SITE, "collect")
    doc = page_memory.library(PAGE_A, "Page A", text="A global chapter.")
    other = page_memory.library(PAGE_A, "Page A (beta)", text="A beta chapter.", project="beta")
    assert doc.id in [d["id"] for d in page_memory.match(PAGE_A, project="alpha")["documents"]]
    in_alpha = vault.read(lambda c: q.list_documents(c, FactFilter(project="alpha")))
    assert [d.id for d in in_alpha] == [doc.id] and other.id not in [d.id for d in in_alpha]


# 12. within a tier the canonical of a group is the earliest *stored*, not the earliest valid_at
def test_canonical_election_ranks_by_created_at_not_valid_at(vault: Vault) -> None:
    first = remember(vault, "Standup is at nine", Origin(kind="cli"), valid_at="2026-05-01T09:00:00+00:00")
    second = remember(vault, "Standup is at nine", Origin(kind="cli"), valid_at="2020-01-01T09:00:00+00:00")

    def regroup(conn: Any, change: Change) -> None:
        conn.execute("UPDATE chunks SET created_at = '2026-01-01T00:00:00+00:00' WHERE id = ?", (first,))
        conn.execute("UPDATE chunks SET created_at = '2026-02-01T00:00:00+00:00' WHERE id = ?", (second,))
        conn.execute("UPDATE chunks SET fact_group = ?, is_canonical = 0 WHERE id IN (?, ?)", (first, first, second))
        reelect_canonicals(conn, change, [first])

    vault.write(regroup)
    assert [get(vault, i).is_canonical for i in (first, second)] == [True, False]
    assert elect([get(vault, second), get(vault, first)]).id == first


def test_in_memory_approvals_are_bounded_oldest_decided_first(vault: Vault) -> None:
    from vodou_desktop.governance import approvals as ap

    gate = ap.ApprovalGate(vault, ap.ToolBox(vault, SiteModes(vault), None, None))
    turn = ap.Turn(None, has_page_content=True)
    first = gate.submit("remember", {"text": "first"}, turn)["approval"]["id"]
    gate.resolve(first, "deny")
    ids = [gate.submit("remember", {"text": f"n{i}"}, turn)["approval"]["id"] for i in range(ap.MAX_VOLATILE)]
    listed = [a["id"] for a in gate.approvals(pending_only=False)]
    assert len(listed) == ap.MAX_VOLATILE and first not in listed and ids[0] in listed
    gate.submit("remember", {"text": "one more"}, turn)
    assert ids[0] not in [a["id"] for a in gate.approvals(pending_only=False)]
    assert gate.pending_count() == ap.MAX_VOLATILE
