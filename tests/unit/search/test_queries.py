"""Any user string is a safe query; meaning finds a paraphrase that shares no words."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.keyword import match_expression
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import FactFilter, Vault

NASTY = ['"', '""', "'", "AND", "OR NOT", "NEAR(a b)", "a*", "^x", "col:val", "(((", "-x", "✓🙂", "",
         " ", "\x00", "x" * 10_000, "SELECT * FROM chunks; --", "\\", "{a b}", "a + b", "é\u0301"]


@pytest.mark.parametrize("query", NASTY)
def test_nasty_queries_never_raise(keyword_search: SearchService, query: str) -> None:
    remember(keyword_search.vault, "a plain fact about AND and OR", Origin(kind="cli"))
    keyword_search.search(query, FactFilter())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_arbitrary_strings_never_raise_on_the_keyword_path(keyword_search: SearchService, text: str) -> None:
    keyword_search.search(text, FactFilter(project="p"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_arbitrary_strings_never_raise_on_the_hybrid_path(hybrid_search: SearchService, text: str) -> None:
    hybrid_search.search(text, FactFilter(project="p"))


def test_match_expression_quotes_every_token() -> None:
    assert match_expression('say "hi" AND NEAR(x)') == '"say" "hi" "near" "x"'
    assert match_expression("?!") is None


def test_paraphrase_sharing_no_words_is_found_by_meaning(hybrid_search: SearchService) -> None:
    vault = hybrid_search.vault
    target = remember(vault, "My daughter takes violin lessons every Saturday morning", Origin(kind="cli"))
    remember(vault, "The car insurance renewal is due in March", Origin(kind="cli"))
    remember(vault, "Our wifi password is taped under the router", Origin(kind="cli"))
    assert hybrid_search.embedder is not None
    backfill(vault, hybrid_search.embedder)
    results = hybrid_search.search("kid practising a string instrument at the weekend", FactFilter(), k=3)
    assert results and results[0].fact.id == target
    assert results[0].factors["keyword_bm25"] is None and results[0].factors["path"] == "hybrid"


def test_cli_add_then_search_by_keyword_and_by_paraphrase(vault: Vault, cli_model: object) -> None:
    add = run_cli("--vault", str(vault.path), "mem", "add", "The spare house key is inside the blue flowerpot")
    assert add.code == 0, add.err
    by_word = run_cli("--vault", str(vault.path), "mem", "search", "flowerpot")
    assert "blue flowerpot" in by_word.out
    by_meaning = run_cli("--vault", str(vault.path), "mem", "search", "where is the extra door key hidden")
    assert "blue flowerpot" in by_meaning.out


def test_cli_keyword_path_when_embedder_is_off(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    run_cli("--vault", str(vault.path), "mem", "add", "The spare house key is inside the blue flowerpot")
    assert "flowerpot" in run_cli("--vault", str(vault.path), "mem", "search", "flowerpot").out
    assert "no matching" in run_cli("--vault", str(vault.path), "mem", "search", "extra door opener concealed").out


def test_or_fallback_leaves_out_very_common_terms(keyword_search: SearchService) -> None:
    from vodou_desktop.vault.facts import insert_fact
    from vodou_desktop.vault.sources import stamp_source

    def fill(conn, change):  # type: ignore[no-untyped-def]
        source = stamp_source(conn, change, kind="bench", tier="first_party")
        for i in range(2_100):
            insert_fact(conn, change, text=f"weekly meeting note number {i}", source_id=source)

    vault = keyword_search.vault
    vault.write(fill)
    rare = remember(vault, "the zebra crossing outside school was repainted", Origin(kind="cli"))
    both = keyword_search.search("meeting zebra", FactFilter(), k=10)
    assert [r.fact.id for r in both] == [rare]  # no AND hit; OR over the rare term only
    few = remember(vault, "the quarterly meeting moved to Thursday", Origin(kind="cli"))
    assert {r.fact.id for r in keyword_search.search("quarterly meeting", FactFilter())} == {few}


def test_a_term_that_becomes_common_is_seen_as_common_at_once(keyword_search: SearchService,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Which terms are common is remembered between queries, but only until the vault changes."""
    from vodou_desktop.search import service as service_module

    monkeypatch.setattr(service_module, "COMMON_TERM_MIN", 3)
    vault = keyword_search.vault
    apple = remember(vault, "an apple from the orchard", Origin(kind="cli"))
    pie = remember(vault, "a pie crust recipe", Origin(kind="cli"))
    assert {r.fact.id for r in keyword_search.search("apple pie", FactFilter())} == {apple, pie}  # both rare: OR
    for i in range(4):
        remember(vault, f"apple variety number {i}", Origin(kind="cli"))
    # "apple" is now in more than 3 memories: common, so only the rows with the rare "pie" are picked
    assert [r.fact.id for r in keyword_search.search("apple pie", FactFilter())] == [pie]


def _ranked_then_filtered(conn, match: str, f: FactFilter, limit: int) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    """What the keyword check means: the best ``limit * KEYWORD_OVERFETCH`` matches by bm25, the first
    ``limit`` of them that pass ``f``; all matches filtered when too few pass and more exist."""
    from vodou_desktop.vault import query as q

    want = limit * q.KEYWORD_OVERFETCH
    ranked = [(int(r[0]), float(r[1])) for r in conn.execute(
        "SELECT rowid, bm25(chunks_fts, 1.0, 0.2) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
        " ORDER BY s, rowid LIMIT ?", (match, want))]
    ok = q.allowed_ids(conn, [i for i, _ in ranked], f)
    kept = [(i, s) for i, s in ranked if i in ok][:limit]
    if len(kept) == limit or len(ranked) < want:
        return kept
    every = [(int(r[0]), float(r[1])) for r in conn.execute(
        "SELECT rowid, bm25(chunks_fts, 1.0, 0.2) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s, rowid",
        (match,))]
    ok = q.allowed_ids(conn, [i for i, _ in every], f)
    return [(i, s) for i, s in every if i in ok][:limit]


def test_the_keyword_check_ranks_a_few_first_and_all_when_few_pass(vault: Vault) -> None:
    """Matches are ranked 4 per result first, 8 when too few of those pass, then all: the results are
    those of ranking 8 per result and filtering them in order (and all of them when too few pass)."""
    from vodou_desktop.vault import ALL_PROJECTS
    from vodou_desktop.vault import query as q

    ids = {}
    for i in range(80):  # longer texts rank lower; projects by rank: q first, a few global, p last
        project = "q" if i < 25 else None if i < 28 else "p" if i >= 50 else "r"
        ids[i] = remember(vault, "zebra " + " ".join(f"filler{j}" for j in range(i)), Origin(kind="cli"),
                          project=project)
    filters = [FactFilter(project="p"), FactFilter(project="q"), FactFilter(), FactFilter(project=ALL_PROJECTS),
               FactFilter(project="none-such")]
    for f in filters:
        for limit in range(1, 12):
            got = vault.read(lambda c, f=f, limit=limit: q.keyword_rank_rows(c, '"zebra"', f, limit))
            want = vault.read(lambda c, f=f, limit=limit: _ranked_then_filtered(c, '"zebra"', f, limit))
            assert [(row.id, score) for row, score in got] == want, (f, limit)
    # project p: none in the first 20 or 40 ranked, 3 global among the first 40, then the p ones by rank
    top = vault.read(lambda c: q.keyword_rank_rows(c, '"zebra"', FactFilter(project="p"), 5))
    assert [row.id for row, _ in top] == [ids[25], ids[26], ids[27], ids[50], ids[51]]
