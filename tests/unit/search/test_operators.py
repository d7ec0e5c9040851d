"""Search operators (``project:``, ``kind:``, ``site:``, ``before:``, ``after:``): parsed from what a person
or an AI tool typed, applied on top of the caller's filter, never wider than it."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from vodou_desktop.errors import InvalidInput, KnownError, PolicyRefused
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search import operators
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.query import Scope


def test_words_and_operators_are_told_apart() -> None:
    parsed = operators.parse('heron project:"home office" kind:note kind:Decision site:Birds.Example after:2024-05'
                             " before:2025 nest http://x.example/a b:c")
    assert parsed.words == "heron nest http://x.example/a b:c"
    assert (parsed.project, parsed.scope, parsed.kinds, parsed.site) == (
        "home office", Scope.PROJECT_ONLY, ("note", "decision"), "birds.example")
    assert parsed.after.startswith("2024-0") and parsed.before.startswith("202")  # type: ignore[union-attr]
    assert operators.parse("project:global").scope is Scope.GLOBAL_ONLY
    assert (operators.parse("project:birds+global").project, operators.parse("project:birds+global").scope) == (
        "birds", Scope.PROJECT_AND_GLOBAL)
    plain = operators.parse("nothing special: here")
    assert plain.operators == () and plain.words == "nothing special: here" and not plain.only_operators
    assert operators.parse("kind:fact").only_operators


@pytest.mark.parametrize("text, said", [
    ("after:lunch", "after: 'lunch'"),
    ("kind:thought", "kind:thought is not a kind of memory"),
    ("project:a project:b", "one project at a time"),
    ("site:a.example site:b.example", "one site at a time"),
    ("site:not_a_host!", "host"),
])
def test_a_malformed_operator_is_refused_in_words(text: str, said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        operators.parse(text)


@pytest.fixture
def world(vault: Vault) -> dict[str, int]:
    def add(text: str, project: str | None, kind: str = "fact", url: str | None = None,
            when: str | None = None) -> int:
        return remember(vault, text, Origin(kind="note" if url else "cli", url=url), kind=kind, project=project,
                        valid_at=when, valid_precision="day" if when else None)

    return {"alpha": add("wren alpha fact", "alpha", when="2024-03-01"),
            "alpha_note": add("wren alpha note", "alpha", kind="note", url="https://w.birds.example/a",
                              when="2025-06-01"),
            "beta": add("wren beta secret", "beta", when="2024-08-01"),
            "global": add("wren global fact", None, url="https://other.example/b", when="2023-01-01"),
            "pref": add("wren preference", None, kind="preference", when="2025-01-01")}


WALLS = {"owner": FactFilter(project=ALL_PROJECTS), "alpha and global": FactFilter(project="alpha"),
         "alpha only": FactFilter(project="alpha", global_too=False), "global only": FactFilter(project=None)}
TYPED = ["project:alpha", "project:beta", "project:global", "project:alpha+global", "project:beta+global",
         "kind:note", "kind:preference", "site:birds.example", "after:2024-06-01", "before:2024-06-01", ""]


def _ids(vault: Vault, f: FactFilter) -> set[int]:
    return {fact.id for fact in vault.read(lambda c: q.list_facts(c, f, limit=1000))}


@pytest.mark.parametrize("wall", sorted(WALLS))
def test_no_operator_ever_reaches_past_the_wall(vault: Vault, world: dict[str, int], wall: str) -> None:
    """Every wall × every pair of operators: what the narrowed filter lets through is within the wall, or the
    query is refused in words; a refusal never names a memory behind the wall."""
    base = WALLS[wall]
    allowed = _ids(vault, base)
    for a, b in itertools.product(TYPED, repeat=2):
        try:
            narrowed = operators.parse(f"{a} {b}").narrow(base)
        except KnownError as exc:
            assert "secret" not in str(exc)
            continue
        assert _ids(vault, narrowed) <= allowed, (wall, a, b)


def test_what_each_operator_keeps(vault: Vault, world: dict[str, int]) -> None:
    owner = FactFilter(project=ALL_PROJECTS)

    def kept(text: str, f: FactFilter = owner) -> set[str]:
        by_id = {v: k for k, v in world.items()}
        return {by_id[i] for i in _ids(vault, operators.parse(text).narrow(f))}

    assert kept("project:alpha") == {"alpha", "alpha_note"}
    assert kept("project:alpha+global") == {"alpha", "alpha_note", "global", "pref"}
    assert kept("project:global") == {"global", "pref"}
    assert kept("kind:note kind:preference") == {"alpha_note", "pref"}
    assert kept("site:birds.example") == {"alpha_note"}
    assert kept("after:2024-06-01") == {"alpha_note", "beta", "pref"}
    assert kept("after:2024-06-01 before:2025-03") == {"beta", "pref"}
    assert kept("project:alpha", FactFilter(project="alpha")) == {"alpha", "alpha_note"}
    with pytest.raises(PolicyRefused, match="project beta is outside it"):
        operators.parse("project:beta").narrow(FactFilter(project="alpha"))
    with pytest.raises(PolicyRefused, match="the global memories is outside it"):
        operators.parse("project:global").narrow(FactFilter(project="alpha", global_too=False))
    with pytest.raises(InvalidInput, match="leave nothing"):
        operators.parse("kind:note").narrow(FactFilter(project=ALL_PROJECTS, kinds=("decision",)))


def test_the_search_entry_reads_operators_only_when_asked(keyword_search: SearchService,
                                                         world: dict[str, int]) -> None:
    def found(text: str, f: FactFilter | None = None, **kw: Any) -> set[int]:
        return {r.fact.id for r in keyword_search.search(text, f or FactFilter(project=ALL_PROJECTS), k=20, **kw)}

    assert found("wren project:alpha", operators=True) == {world["alpha"], world["alpha_note"]}
    assert found("wren kind:note", operators=True) == {world["alpha_note"]}
    assert found("kind:preference", operators=True) == {world["pref"]}  # operators alone: what they let through
    assert world["beta"] in found("wren project:alpha")  # page text is data: there "project:alpha" narrows nothing
    assert found("wren after:lunch") == found("wren")  # and never an error
    with pytest.raises(PolicyRefused):
        found("wren project:beta", FactFilter(project="alpha"), operators=True)
    every = keyword_search.search_all("project:alpha", FactFilter(project=ALL_PROJECTS), operators=True)
    assert {i for i, _ in every.more} == {world["alpha"], world["alpha_note"]} and every.ranked == []
    some = keyword_search.search_all("wren kind:fact", FactFilter(project=ALL_PROJECTS), operators=True)
    assert {r.fact.id for r in some.ranked} | {i for i, _ in some.more} == {world["alpha"], world["beta"],
                                                                          world["global"]}
