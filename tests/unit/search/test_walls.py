"""SEARCH-3/4 and seed 004's sentinel: the hard predicates hold on every path."""

from __future__ import annotations

import pytest

from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import FactFilter, Vault

SENTINEL = "zebracorn pricing for client B is 4200 per seat"


def _seed(vault: Vault) -> dict[str, int]:
    ids = {
        "b": remember(vault, SENTINEL, Origin(kind="cli"), project="B"),
        "global": remember(vault, "zebracorn is the code name of the pricing model", Origin(kind="cli")),
        "pref": remember(vault, "prefers zebracorn summaries as bullet points", Origin(kind="cli"),
                         kind="preference", project="B"),
        "a": remember(vault, "zebracorn pricing for client A is negotiated yearly", Origin(kind="cli"), project="A"),
    }
    return ids


@pytest.fixture(params=["keyword", "hybrid"])
def search(request: pytest.FixtureRequest, vault: Vault) -> SearchService:
    service: SearchService = request.getfixturevalue(f"{request.param}_search")
    return service


def _ids(search: SearchService, text: str, project: str | None) -> set[int]:
    if search.semantic:
        assert search.embedder is not None
        backfill(search.vault, search.embedder)
    return {r.fact.id for r in search.search(text, FactFilter(project=project), k=50)}


def test_sentinel_in_project_b_never_reaches_project_a(vault: Vault, search: SearchService) -> None:
    ids = _seed(vault)
    for query in (SENTINEL, "zebracorn", "price per seat for the client"):
        found = _ids(search, query, "A")
        assert ids["b"] not in found
    assert ids["b"] in _ids(search, SENTINEL, "B")


def test_global_fact_and_preference_reach_every_project(vault: Vault, search: SearchService) -> None:
    ids = _seed(vault)
    for project in ("A", "B", "C", None):
        found = _ids(search, "zebracorn", project)
        assert {ids["global"], ids["pref"]} <= found
    assert ids["a"] not in _ids(search, "zebracorn", None)  # no project context: global only


def test_forgotten_superseded_and_document_chunks_never_appear(vault: Vault, search: SearchService) -> None:
    live = remember(vault, "the quokka lives on Rottnest island", Origin(kind="cli"))
    gone = remember(vault, "the quokka was photographed in 2019", Origin(kind="cli"))
    old = remember(vault, "the quokka weighs 2 kg", Origin(kind="cli"))
    new = remember(vault, "the quokka weighs 3 kg", Origin(kind="cli"))
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET invalid_at = 'now', invalidated_by = 't' WHERE id = ?",
                                        (gone,)))
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET superseded_by = ? WHERE id = ?", (new, old)))
    save_document(vault, "A long article on the quokka and its island habitat. " * 40,
                  Origin(kind="library", url="https://zoo.example/quokka", title="Quokka"))
    assert _ids(search, "quokka", None) == {live, new}


def test_strong_matches_behind_the_wall_never_enter_the_ranking(vault: Vault, search: SearchService) -> None:
    """Issue 36, item 15: every candidate pass (keyword, meaning, the second hop's expanded keywords,
    the neighbours) reads through the filter. Another project holds many strong matches of the words
    the second hop adds ("Rodrigo" from the first hop's best turn); none may become a candidate, so
    the first ``k`` of any search are the first ``k`` of a longer one, and as many."""
    talk = [remember(vault, text, Origin(kind="turn", tool="harness"), project="talk", valid_at=f"2023-0{i + 1}-01")
            for i, text in enumerate([
                "Bea: my neighbour Rodrigo moved to Lisbon in March", "Ana: how exciting, Lisbon is lovely",
                "Bea: Rodrigo has a cello lesson every Thursday evening", "Ana: I baked a lemon cake for Lisbon",
                "Bea: the bus to Lisbon was late twice", "Ana: my sister flew to Lisbon", "Bea: Lisbon trams are old",
                "Ana: we walked around Lisbon all day", "Bea: Lisbon has steep hills"])]
    for i in range(40):
        remember(vault, f"Zed: Rodrigo Rodrigo neighbour cello Thursday number {i}",
                 Origin(kind="turn", tool="harness"), project="secret", valid_at="2023-05-01")
    filt = FactFilter(project="talk")
    question = "which instrument does the friend who moved to Lisbon study"
    _ids(search, question, "talk")  # embeds the vault for the hybrid path
    cands = search.gather(question, filt)
    assert cands.hop_words, "the set-up no longer makes the second hop add words"
    gathered = set(cands.facts) | set(cands.kw) | set(cands.hop) | set(cands.vec) | set(cands.before.values()) \
        | set(cands.after.values())
    assert gathered <= set(talk), "a memory behind the wall became a candidate"
    longest = [r.fact.id for r in search.search(question, filt, k=50)]
    assert len(longest) == len(talk)
    for k in range(1, len(talk) + 1):
        assert [r.fact.id for r in search.search(question, filt, k=k)] == longest[:k]
