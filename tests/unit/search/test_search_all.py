"""``SearchService.search_all``: every match of a search is reachable (the memory browser lists them
all), and its first results are exactly ``search``'s."""

from __future__ import annotations

from vodou_desktop.data.sample_vault import fill_vault
from vodou_desktop.search.service import KEYWORD_POOL, MAX_K, SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q

EVERYTHING = FactFilter(project=ALL_PROJECTS)


def test_search_all_reaches_every_match_and_keeps_the_top_ten(keyword_search: SearchService) -> None:
    fill_vault(keyword_search.vault, 2 * MAX_K + 50, heron_every=1)  # every memory mentions a heron
    found = keyword_search.search_all("grey heron", EVERYTHING)
    assert found.total == 2 * MAX_K + 50 > MAX_K  # search() alone stops at MAX_K
    assert len(found.ranked) <= KEYWORD_POOL * 3 and found.more  # beyond the ranked candidates
    ids = [r.fact.id for r in found.ranked] + [i for i, _ in found.more]
    assert len(set(ids)) == len(ids)
    assert [r.fact.id for r in keyword_search.search("grey heron", EVERYTHING, k=10)] == ids[:10]
    most = [r.fact.id for r in keyword_search.search("grey heron", EVERYTHING, k=MAX_K)]
    assert most == ids[:len(most)] and len(most) < found.total  # search() alone cannot reach them all
    bm25 = [score for _, score in found.more]
    assert bm25 == sorted(bm25)  # further matches best first


def test_search_all_honours_the_project_wall(keyword_search: SearchService) -> None:
    fill_vault(keyword_search.vault, 140, heron_every=1)
    walled = FactFilter(project="garden")
    found = keyword_search.search_all("heron", walled)
    allowed = keyword_search.vault.read(lambda conn: set(q.ordered_fact_ids(conn, walled)))
    ids = {r.fact.id for r in found.ranked} | {i for i, _ in found.more}
    assert ids == allowed and 0 < len(ids) < 140


def test_ordered_fact_ids_sorts_in_sql(keyword_search: SearchService) -> None:
    fill_vault(keyword_search.vault, 30)
    vault = keyword_search.vault
    newest = vault.read(lambda conn: q.ordered_fact_ids(conn, EVERYTHING, "newest"))
    oldest = vault.read(lambda conn: q.ordered_fact_ids(conn, EVERYTHING, "oldest"))
    assert newest == list(reversed(oldest)) and len(newest) == 30
    facts = {f.id: f for f in vault.read(lambda conn: q.facts_by_ids(conn, newest, EVERYTHING))}
    by_project = vault.read(lambda conn: q.ordered_fact_ids(conn, EVERYTHING, "project"))
    projects = [facts[i].project for i in by_project]
    named = [p for p in projects if p is not None]
    assert named == sorted(named) and projects[len(named):] == [None] * (len(projects) - len(named))
    first_page = vault.read(lambda conn: q.ordered_fact_ids(conn, EVERYTHING, "kind", 5))
    assert first_page == vault.read(lambda conn: q.ordered_fact_ids(conn, EVERYTHING, "kind"))[:5]
