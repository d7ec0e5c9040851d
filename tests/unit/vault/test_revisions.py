"""Corrections keep their history; pins outrank and unpinning restores the provenance."""

from __future__ import annotations

import json

import pytest

from tests.support import run_cli
from vodou_desktop.errors import Conflict
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, correct, move, pin, remember
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

EVERYTHING = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def test_correction_is_a_new_revision_and_the_old_one_is_never_searched(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    old = remember(vault, "the gate code is 1234", Origin(kind="note", url="https://home.example/g", title="G"),
                   project="home")
    new = correct(vault, old, "the gate code is 9876")
    fact = vault.read(lambda c: q.get_fact(c, new, FactFilter(project="home")))
    assert (fact.revision, fact.predecessor_id, fact.project, fact.source_url) == (
        2, old, "home", "https://home.example/g")
    previous = vault.read(lambda c: q.get_fact(c, old, EVERYTHING))
    assert previous.superseded_by == new and previous.text == "the gate code is 1234"
    assert [r.fact.id for r in keyword_search.search("gate code", FactFilter(project="home"))] == [new]
    with pytest.raises(Conflict, match="already replaced"):
        correct(vault, old, "again")


def test_pinned_fact_outranks_and_unpin_restores_source(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    a = remember(vault, "the router reboots nightly", Origin(kind="cli", tier="import"))
    b = remember(vault, "the router reboots nightly", Origin(kind="cli", tier="first_party"))
    assert [r.fact.id for r in keyword_search.search("router reboots")] == [b, a]
    assert pin(vault, a) is True and pin(vault, a) is False
    ranked = keyword_search.search("router reboots")
    assert [r.fact.id for r in ranked] == [a, b] and ranked[0].factors["tier"] == "pinned"
    assert pin(vault, a, False) is True
    assert vault.read(lambda c: q.get_fact(c, a, EVERYTHING)).tier == "import"
    assert vault.reader().execute("SELECT count(*) FROM memory_sources WHERE tier = 'pinned'").fetchone()[0] == 0


def test_cli_correct_and_pin(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    v = ["--vault", str(vault.path)]
    remember(vault, "bins go out on Tuesday", Origin(kind="cli"))
    fixed = json.loads(run_cli(*v, "mem", "correct", "1", "bins go out on Wednesday", "--json").out)
    assert fixed["revision"] == 2 and fixed["predecessor_id"] == 1
    assert json.loads(run_cli(*v, "mem", "pin", str(fixed["id"]), "--json").out)["tier"] == "pinned"
    missing = run_cli(*v, "mem", "correct", "99", "x")
    assert missing.code == 2 and "no memory with id 99" in missing.err


def test_moving_a_forgotten_memory_is_refused(keyword_search: SearchService) -> None:
    """A move writes a new revision from the old one's text: moving a forgotten memory would show its
    text again."""
    vault = keyword_search.vault
    fact = remember(vault, "the locker combination is 4711", Origin(kind="cli"), project="gym")
    Forgetting(vault).forget_fact(fact)
    with pytest.raises(Conflict, match="forgotten"):
        move(vault, fact, "home")
    assert keyword_search.search("locker combination", FactFilter(project=ALL_PROJECTS)) == []
    assert vault.read(lambda c: q.count_facts(c, EVERYTHING)) == 1
