"""Project scopes (UI-7): "this project only", "this project and global", "global only" — applied by the
one query builder, never wider than the caller's wall, with counts for a project list that match what
each scope lists."""

from __future__ import annotations

import pytest

from vodou_desktop.errors import InvalidInput, PolicyRefused
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.query import Scope, within

OWNER = FactFilter(project=ALL_PROJECTS)


@pytest.fixture
def spread(vault: Vault) -> dict[str | None, int]:
    counts = {"birds": 4, "garden": 2, None: 3}
    for project, n in counts.items():
        for i in range(n):
            remember(vault, f"memory {i} of {project}", Origin(kind="cli"), project=project)
    remember(vault, "likes early mornings", Origin(kind="cli"), kind="preference", project="birds")  # global
    counts[None] += 1
    return counts


def _listed(vault: Vault, f: FactFilter) -> list[str | None]:
    return [fact.project for fact in vault.read(lambda c: q.list_facts(c, f, limit=1000))]


@pytest.mark.parametrize("scope", list(Scope))
@pytest.mark.parametrize("project", ["birds", "garden", "nothing here"])
def test_each_scope_lists_what_its_count_says(vault: Vault, spread: dict[str | None, int], project: str,
                                              scope: Scope) -> None:
    f = within(OWNER, project, scope)
    listed = _listed(vault, f)
    counts = vault.read(lambda c: q.project_counts(c, OWNER))
    assert len(listed) == counts.count(project, scope) == vault.read(lambda c: q.count_facts(c, f))
    expected = {Scope.PROJECT_ONLY: {project}, Scope.PROJECT_AND_GLOBAL: {project, None},
                Scope.GLOBAL_ONLY: {None}}[scope]
    assert set(listed) <= expected
    if scope is Scope.PROJECT_ONLY:
        assert len(listed) == spread.get(project, 0)


def test_counts_for_a_project_list(vault: Vault, spread: dict[str | None, int]) -> None:
    counts = vault.read(lambda c: q.project_counts(c, OWNER))
    assert counts.projects == {"birds": 4, "garden": 2} and counts.global_count == 4 and counts.total == 10
    assert counts.as_json()["projects"][0] == {"name": "birds", "only": 4, "with_global": 8}
    walled = vault.read(lambda c: q.project_counts(c, FactFilter(project="garden")))
    assert walled.projects == {"garden": 2} and walled.global_count == 4  # a wall counts only what it sees


def test_a_scope_never_widens_a_wall() -> None:
    alpha = FactFilter(project="alpha")
    assert within(alpha, "alpha", Scope.PROJECT_ONLY) == FactFilter(project="alpha", global_too=False)
    assert within(alpha, "alpha", Scope.PROJECT_AND_GLOBAL) == alpha
    assert within(alpha, None, Scope.GLOBAL_ONLY) == FactFilter(project=None)
    only = FactFilter(project="alpha", global_too=False)
    assert within(only, "alpha", Scope.PROJECT_AND_GLOBAL) == only  # asking for more gives no more
    for wall, project, scope in ((alpha, "beta", Scope.PROJECT_ONLY), (alpha, "beta", Scope.PROJECT_AND_GLOBAL),
                                 (only, None, Scope.GLOBAL_ONLY), (FactFilter(project=None), "alpha",
                                                                    Scope.PROJECT_ONLY)):
        with pytest.raises(PolicyRefused, match="outside it"):
            within(wall, project, scope)
    with pytest.raises(InvalidInput):
        within(OWNER, " ", Scope.PROJECT_ONLY)
