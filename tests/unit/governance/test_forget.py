"""GOV-6..8: forget (dry run, confirm within 8 s, undo), canonical re-election, erase to the bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import file_hashes, total_hits
from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.governance.forget import CONFIRM_WINDOW_S, Forgetting
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.vault import ALL_PROJECTS, Fact, FactFilter, Vault
from vodou_desktop.vault import query as q

from .conftest import ManualClock, add_fact

OWNER = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def _fact(vault: Vault, fact_id: int) -> Fact:
    return vault.read(lambda c: q.get_fact(c, fact_id, OWNER))


def _visible_ids(vault: Vault) -> set[int]:
    return {f.id for f in vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS), limit=1000))}


@pytest.fixture
def site_facts(vault: Vault) -> dict[str, Any]:
    ids = {
        "root": add_fact(vault, "root page fact", "https://example.com/a"),
        "sub": add_fact(vault, "subdomain fact", "https://docs.example.com/b", project="alpha"),
        "page_only": add_fact(vault, "typed in the cli about page: https://www.example.com/c"),
        "other": add_fact(vault, "another site", "https://example.org/x"),
        "lookalike": add_fact(vault, "look-alike site", "https://example.com.evil.test/x"),
    }
    save_document(vault, "a saved article", Origin(kind="library", url="https://example.com/article", title="A"))
    return ids


def test_dry_run_counts_and_changes_nothing(vault: Vault, vault_path: Path, forgetting: Forgetting,
                                           site_facts: dict[str, int]) -> None:
    vault.checkpoint()
    before = file_hashes(vault_path)
    plan = forgetting.plan("EXAMPLE.com.")
    dry = forgetting.forget_host("example.com", dry_run=True)
    assert file_hashes(vault_path) == before
    assert (plan["host"], plan["facts"], plan["documents"]) == ("example.com", 3, 1)
    assert plan["expires_in"] == CONFIRM_WINDOW_S and plan["token"]
    assert dry == {"host": "example.com", "facts": 3, "documents": 1, "dry_run": True}
    real = forgetting.forget_host("example.com")
    assert (real["facts_hidden"], real["documents_kept"]) == (dry["facts"], dry["documents"])
    assert _visible_ids(vault) == {site_facts["other"], site_facts["lookalike"]}
    hidden = _fact(vault, site_facts["sub"])
    assert hidden.invalidated_by == real["op"] and hidden.invalid_at
    docs = vault.read(lambda c: q.list_documents(c, FactFilter(project=ALL_PROJECTS)))
    assert len(docs) == 1  # documents are counted and kept


def test_confirm_at_7_9_seconds_forgets(vault: Vault, forgetting: Forgetting, clock: ManualClock,
                                        site_facts: dict[str, int]) -> None:
    token = forgetting.plan("example.com")["token"]
    clock.advance(7.9)
    result = forgetting.confirm(token)
    assert result["facts_hidden"] == 3 and result["op"]
    assert site_facts["root"] not in _visible_ids(vault)


def test_confirm_at_8_1_seconds_does_nothing_and_says_why(vault: Vault, vault_path: Path, forgetting: Forgetting,
                                                          clock: ManualClock, site_facts: dict[str, int]) -> None:
    token = forgetting.plan("example.com")["token"]
    vault.checkpoint()
    before = file_hashes(vault_path)
    clock.advance(8.1)
    with pytest.raises(Conflict, match="expired"):
        forgetting.confirm(token)
    assert file_hashes(vault_path) == before
    assert len(_visible_ids(vault)) == 5


def test_reused_and_unknown_tokens_change_nothing(vault: Vault, forgetting: Forgetting,
                                                  site_facts: dict[str, int]) -> None:
    token = forgetting.plan("example.com")["token"]
    first = forgetting.confirm(token)
    forgetting.undo(first["op"])
    with pytest.raises(Conflict, match="already used"):
        forgetting.confirm(token)
    with pytest.raises(InvalidInput, match="unknown"):
        forgetting.confirm("not-a-token")
    assert len(_visible_ids(vault)) == 5


def test_tokens_are_per_service_and_an_injected_window_is_honoured(vault: Vault, clock: ManualClock,
                                                                   site_facts: dict[str, int]) -> None:
    quick = Forgetting(vault, clock=clock, confirm_window=2.0)
    token = quick.plan("example.org")["token"]
    with pytest.raises(InvalidInput):
        Forgetting(vault, clock=clock).confirm(token)
    clock.advance(2.5)
    with pytest.raises(Conflict):
        quick.confirm(token)


def test_undo_restores_exactly_what_the_operation_hid(vault: Vault, forgetting: Forgetting,
                                                      site_facts: dict[str, int]) -> None:
    op = forgetting.forget_host("example.com")["op"]
    result = forgetting.undo(op)
    assert result["facts_restored"] == 3
    assert len(_visible_ids(vault)) == 5
    with pytest.raises(Conflict, match="already undone"):
        forgetting.undo(op)
    with pytest.raises(NotFound):
        forgetting.undo("op-unknown")


def test_undo_never_resurrects_a_fact_hidden_by_another_operation(vault: Vault, forgetting: Forgetting,
                                                                  site_facts: dict[str, int]) -> None:
    first = forgetting.forget_host("docs.example.com")  # hides "sub"
    second = forgetting.forget_host("example.com")  # hides the rest; "sub" was already hidden
    assert second["facts_hidden"] == 2
    forgetting.undo(second["op"])
    assert site_facts["sub"] not in _visible_ids(vault)
    assert _fact(vault, site_facts["sub"]).invalidated_by == first["op"]
    assert site_facts["root"] in _visible_ids(vault)


def test_undo_keeps_hidden_what_another_active_forget_covers(vault: Vault, forgetting: Forgetting) -> None:
    both = add_fact(vault, "from a.test about page: https://b.example.net/p", "https://a.example.org/x")
    first = forgetting.forget_host("a.example.org")
    forgetting.forget_host("b.example.net")  # finds nothing visible: "both" is already hidden
    result = forgetting.undo(first["op"])
    assert result["facts_still_hidden"] == 1
    assert both not in _visible_ids(vault)


def test_undo_leaves_facts_hidden_by_anything_else(vault: Vault, forgetting: Forgetting,
                                                   site_facts: dict[str, int]) -> None:
    def hide(conn, change):  # type: ignore[no-untyped-def]
        conn.execute("UPDATE chunks SET invalid_at = '2025-01-01T00:00:00+00:00', invalidated_by = 'dedupe'"
                     " WHERE id = ?", (site_facts["root"],))

    vault.write(hide)
    op = forgetting.forget_host("example.com")["op"]
    forgetting.undo(op)
    assert _fact(vault, site_facts["root"]).invalidated_by == "dedupe"
    assert site_facts["root"] not in _visible_ids(vault)


def test_forget_one_fact_hides_only_it_and_undo_brings_it_back(vault: Vault, forgetting: Forgetting,
                                                                site_facts: dict[str, int]) -> None:
    result = forgetting.forget_fact(site_facts["root"])
    assert (result["id"], result["facts_hidden"]) == (site_facts["root"], 1)
    assert _visible_ids(vault) == set(site_facts.values()) - {site_facts["root"]}
    assert _fact(vault, site_facts["root"]).invalidated_by == result["op"]
    with pytest.raises(Conflict, match="already forgotten"):
        forgetting.forget_fact(site_facts["root"])
    restored = forgetting.undo(result["op"])
    assert (restored["id"], restored["facts_restored"]) == (site_facts["root"], 1)
    assert _visible_ids(vault) == set(site_facts.values())
    with pytest.raises(Conflict, match="already undone"):
        forgetting.undo(result["op"])
    with pytest.raises(NotFound):
        forgetting.forget_fact(999_999)


def test_undoing_a_fact_forget_keeps_it_hidden_under_a_host_forget(vault: Vault, forgetting: Forgetting,
                                                                   site_facts: dict[str, int]) -> None:
    one = forgetting.forget_fact(site_facts["root"])
    host = forgetting.forget_host("example.com")  # "root" is already hidden: not stamped again
    assert host["facts_hidden"] == 2
    result = forgetting.undo(one["op"])
    assert (result["facts_restored"], result["facts_still_hidden"]) == (0, 1)
    assert _fact(vault, site_facts["root"]).invalidated_by == host["op"]
    forgetting.undo(host["op"])
    assert site_facts["root"] in _visible_ids(vault)


def _group(vault: Vault, ids: list[int]) -> None:
    def job(conn, change):  # type: ignore[no-untyped-def]
        for i in ids:
            conn.execute("UPDATE chunks SET fact_group = 1, is_canonical = (id = ?) WHERE id = ?", (ids[0], i))

    vault.write(job)


def test_forgetting_the_canonical_re_elects_from_the_rest(vault: Vault, forgetting: Forgetting) -> None:
    canonical = add_fact(vault, "the office moved to Lyon", "https://news.example.com/a")
    capture = add_fact(vault, "the office moved to Lyon!", "https://blog.example.net/b", tier="capture")
    first_party_long = add_fact(vault, "The office moved to Lyon, near the river", "https://x.example.org/c")
    first_party_short = add_fact(vault, "office moved to Lyon", "https://y.example.org/d")
    _group(vault, [canonical, capture, first_party_long, first_party_short])
    op = forgetting.forget_host("news.example.com")["op"]
    # first_party beats capture; equal tiers: the earlier one wins (created_at), not the longer.
    flags = {i: _fact(vault, i).is_canonical for i in (canonical, capture, first_party_long, first_party_short)}
    assert flags == {canonical: False, capture: False, first_party_long: True, first_party_short: False}
    forgetting.undo(op)
    assert _fact(vault, canonical).is_canonical and not _fact(vault, first_party_long).is_canonical


# -- erase ----------------------------------------------------------------------------------

def test_erase_canary_leaves_no_byte_in_db_wal_or_shm(vault: Vault, vault_path: Path,
                                                      forgetting: Forgetting) -> None:
    canary = "CANARY-7f3a9c-erase-me"
    keeper = "CANARY-2b8d41-keep-me"
    for i in range(30):  # enough other rows that pages are reused, not just dropped
        add_fact(vault, f"filler fact number {i} about gardening", "https://filler.example.com/")
    doomed = add_fact(vault, f"my secret is {canary}", "https://secret.example.com/p")
    add_fact(vault, f"other site secret {keeper}", "https://other.example.org/p")
    vault.write(lambda c, ch: c.execute("INSERT INTO entities(id, name, created_at) VALUES (1, 'S', 'now')"))
    vault.write(lambda c, ch: c.execute("INSERT INTO entity_links(entity_id, chunk_id) VALUES (1, ?)", (doomed,)))
    assert total_hits(vault_path, canary) > 0
    result = forgetting.erase_fact(doomed)
    assert result["facts_erased"] == 1
    assert total_hits(vault_path, canary) == 0
    assert total_hits(vault_path, keeper) > 0
    with pytest.raises(NotFound):
        forgetting.erase_fact(doomed)
    remaining = vault.read(lambda c: c.execute("SELECT count(*) FROM entity_links").fetchone()[0])
    assert remaining == 0


def test_erase_takes_the_whole_lineage_and_orphaned_sources(vault: Vault, vault_path: Path,
                                                            forgetting: Forgetting) -> None:
    v1 = add_fact(vault, "LINEAGE-v1 plan draft", "https://plans.example.com/x")
    v2 = add_fact(vault, "LINEAGE-v2 plan revised", "https://plans.example.com/x")
    v3 = add_fact(vault, "LINEAGE-v3 plan final", "https://plans.example.com/x")
    unrelated = add_fact(vault, "unrelated fact", "https://plans.example.com/x")

    def chain(conn, change):  # type: ignore[no-untyped-def]
        conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = 'x' WHERE id = ?", (v2, v1))
        conn.execute("UPDATE chunks SET predecessor_id = ?, superseded_by = ?, superseded_at = 'x' WHERE id = ?",
                     (v1, v3, v2))
        conn.execute("UPDATE chunks SET predecessor_id = ? WHERE id = ?", (v2, v3))
        conn.execute("UPDATE memory_sources SET title = 'LINEAGE-title' WHERE id IN"
                     " (SELECT source_id FROM chunks WHERE id IN (?, ?, ?))", (v1, v2, v3))

    vault.write(chain)
    result = forgetting.erase_fact(v2)  # from the middle of the chain
    assert result["facts_erased"] == 3
    for needle in ("LINEAGE-v1", "LINEAGE-v2", "LINEAGE-v3", "LINEAGE-title"):
        assert total_hits(vault_path, needle) == 0, needle
    assert _fact(vault, unrelated).text == "unrelated fact"


def test_erase_host_removes_every_fact_of_the_host_and_keeps_documents(vault: Vault, vault_path: Path,
                                                                       forgetting: Forgetting) -> None:
    add_fact(vault, "HOSTCANARY-one", "https://a.gone.example/x")
    hidden_first = add_fact(vault, "HOSTCANARY-two", "https://gone.example/y")
    add_fact(vault, "STAYCANARY", "https://stay.example/z")
    save_document(vault, "DOCKEPT text", Origin(kind="library", url="https://gone.example/doc", title="D"))
    forgetting.forget_host("gone.example")  # erase also takes facts that were only hidden
    assert _fact(vault, hidden_first).forgotten
    result = forgetting.erase_host("gone.example")
    assert (result["facts_erased"], result["documents_kept"]) == (2, 1)
    assert total_hits(vault_path, "HOSTCANARY") == 0
    assert total_hits(vault_path, "STAYCANARY") > 0
    assert total_hits(vault_path, "DOCKEPT") > 0
    assert forgetting.forget_host("gone.example", dry_run=True)["facts"] == 0
