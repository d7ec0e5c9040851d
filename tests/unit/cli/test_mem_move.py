"""DATA-4: `vodou mem move` puts a memory in another project; the move is a revision in its history."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.errors import Conflict, InvalidInput
from vodou_desktop.ingest.remember import Origin, move, remember
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

OWNER = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def _seen_from(vault: Vault, project: str | None) -> set[str]:
    index = VectorIndex(vault)
    try:
        found = SearchService(vault, Embedder("none"), index).search("wombat", FactFilter(project=project))
    finally:
        index.close()
    listed = vault.read(lambda c: q.list_facts(c, FactFilter(project=project), limit=100))
    return {r.fact.text for r in found} | {f.text for f in listed}


def test_a_fact_moved_from_b_to_a_is_seen_from_a_only_and_keeps_its_id_and_history(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        fact = remember(vault, "the wombat server runs on port 8080", Origin(kind="cli"), project="B")
        assert "the wombat server runs on port 8080" in _seen_from(vault, "B")
    typo = run_cli("--vault", str(vault_path), "mem", "move", str(fact), "--project", "A")
    assert typo.code == 2 and "there is no project 'A'" in typo.err and "--new" in typo.err  # a typo starts nothing
    result = run_cli("--vault", str(vault_path), "mem", "move", str(fact), "--project", "A", "--new")
    assert result.code == 0, result.err
    assert result.out.startswith(f"#{fact} is now in A (a new project) (the move is in its history).")
    with Vault.open(vault_path) as vault:
        assert "the wombat server runs on port 8080" in _seen_from(vault, "A")
        assert "the wombat server runs on port 8080" not in _seen_from(vault, "B")
        new = vault.read(lambda c: q.get_fact(c, fact, OWNER))
        old = vault.read(lambda c: q.get_fact(c, new.predecessor_id, OWNER))  # type: ignore[arg-type]
        assert (old.project, new.project, old.superseded_by, new.revision) == ("B", "A", fact, 2)
        assert move(vault, fact, None) == fact  # and to global: seen from every project, the same id
        assert "the wombat server runs on port 8080" in _seen_from(vault, "B")
        assert vault.read(lambda c: q.get_fact(c, fact, OWNER)).project is None
    again = run_cli("--vault", str(vault_path), "mem", "move", str(fact), "--project", "A", "--new")
    assert again.code == 2 and "project 'A' exists already" in again.err


def test_preferences_and_forgotten_or_old_revisions_are_refused(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        pref = remember(vault, "prefers tea", Origin(kind="cli"), kind="preference")
        with pytest.raises(InvalidInput, match="preferences are always global"):
            move(vault, pref, "A")
        fact = remember(vault, "in A already", Origin(kind="cli"), project="A")
        with pytest.raises(Conflict, match="already in A"):
            move(vault, fact, "A")
        assert move(vault, fact, "C") == fact
        earlier = vault.read(lambda c: q.get_fact(c, fact, OWNER)).predecessor_id
        with pytest.raises(Conflict, match=f"#{earlier} is an earlier revision of memory #{fact}"):
            move(vault, earlier, "D")  # type: ignore[arg-type]
    refused = run_cli("--vault", str(vault_path), "mem", "move", str(pref), "--global")
    assert refused.code == 2 and "always global" in refused.err


def test_moving_many_is_one_action_that_counts_what_it_skipped(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        ids = [remember(vault, f"bird note {i}", Origin(kind="cli"), project="inbox") for i in range(4)]
        pref = remember(vault, "prefers binoculars with a strap", Origin(kind="cli"), kind="preference")
        remember(vault, "the birds project", Origin(kind="cli"), project="birds")
    moved = run_cli("--vault", str(vault_path), "mem", "move", *map(str, [*ids, pref]), "--project", "birds")
    assert moved.code == 0, moved.err
    assert moved.out.startswith("moved 4 memories, now in birds (1 preference kept global). Undo: vodou undo ")
    with Vault.open(vault_path) as vault:
        assert {vault.read(lambda c, i=i: q.get_fact(c, i, OWNER)).project for i in ids} == {"birds"}
    listed = run_cli("--vault", str(vault_path), "undo", "--dry-run")
    assert listed.out.strip() == "would undo “Move 4 memories to birds” (just now)"
    assert run_cli("--vault", str(vault_path), "undo").code == 0
    with Vault.open(vault_path) as vault:
        assert {vault.read(lambda c, i=i: q.get_fact(c, i, OWNER)).project for i in ids} == {"inbox"}
