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


def test_a_fact_moved_from_b_to_a_is_seen_from_a_only_and_keeps_its_history(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        fact = remember(vault, "the wombat server runs on port 8080", Origin(kind="cli"), project="B")
        assert "the wombat server runs on port 8080" in _seen_from(vault, "B")
    result = run_cli("--vault", str(vault_path), "mem", "move", str(fact), "--project", "A")
    assert result.code == 0, result.err
    assert "is now in A" in result.out and f"#{fact} is kept as its history" in result.out
    with Vault.open(vault_path) as vault:
        assert "the wombat server runs on port 8080" in _seen_from(vault, "A")
        assert "the wombat server runs on port 8080" not in _seen_from(vault, "B")
        old = vault.read(lambda c: q.get_fact(c, fact, OWNER))
        new = vault.read(lambda c: q.get_fact(c, old.superseded_by, OWNER))  # type: ignore[arg-type]
        assert (old.project, new.project, new.predecessor_id, new.revision) == ("B", "A", fact, 2)
        back = move(vault, new.id, None)  # and to global: seen from every project
        assert "the wombat server runs on port 8080" in _seen_from(vault, "B")
        assert vault.read(lambda c: q.get_fact(c, back, OWNER)).project is None


def test_preferences_and_forgotten_or_old_revisions_are_refused(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        pref = remember(vault, "prefers tea", Origin(kind="cli"), kind="preference")
        with pytest.raises(InvalidInput, match="preferences are always global"):
            move(vault, pref, "A")
        fact = remember(vault, "in A already", Origin(kind="cli"), project="A")
        with pytest.raises(Conflict, match="already in A"):
            move(vault, fact, "A")
        newer = move(vault, fact, "C")
        with pytest.raises(Conflict, match=f"replaced by #{newer}"):
            move(vault, fact, "D")
    refused = run_cli("--vault", str(vault_path), "mem", "move", str(pref), "--global")
    assert refused.code == 2 and "always global" in refused.err
