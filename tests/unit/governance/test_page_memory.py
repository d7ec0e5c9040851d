"""Page memory: match, the 30-second probe cache, suggestions and page writes (seed 000 defects 2-4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import total_hits
from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.page_memory import PageMemory, html_to_text
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, save_document
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import reindex_chunk

from .conftest import ManualClock, add_fact

PAGE = "https://en.wikipedia.org/wiki/Okapi"


class CountingReads:
    """Counts the vault reads made through ``vault.read`` (the real read still happens)."""

    def __init__(self, vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = vault.read

        def counted(fn: Any) -> Any:
            self.count += 1
            return real(fn)

        monkeypatch.setattr(vault, "read", counted)


def test_100_probes_of_one_page_read_the_vault_once_per_30_seconds(page_memory: PageMemory, vault: Vault,
                                                                 clock: ManualClock,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    add_fact(vault, "okapis are related to giraffes", PAGE)
    reads = CountingReads(vault, monkeypatch)
    for _ in range(100):
        assert page_memory.probe(PAGE + "#section?")["state"] == "green"
        clock.advance(0.29)  # 100 probes over 29 s
    assert page_memory.probes.loads == 1
    memory_reads = reads.count - 100  # one read per probe resolves the site mode (rules, settings)
    assert memory_reads == 1
    clock.advance(1.1)
    page_memory.probe(PAGE)
    assert page_memory.probes.loads == 2


def test_a_write_for_the_page_invalidates_its_probe_at_once(page_memory: PageMemory, vault: Vault) -> None:
    other = "https://en.wikipedia.org/wiki/Giraffe"
    assert page_memory.probe(PAGE)["state"] == "none"
    assert page_memory.probe(other)["state"] == "none"
    page_memory.note(PAGE, "Okapi", "striped legs")
    assert page_memory.probe(PAGE)["state"] == "green"  # no 30 s wait
    assert page_memory.probes.loads == 3
    page_memory.probe(other)
    assert page_memory.probes.loads == 3  # another page's entry survived


def test_forgetting_the_host_turns_the_probe_off_at_once(page_memory: PageMemory, vault: Vault) -> None:
    from vodou_desktop.governance.forget import Forgetting

    page_memory.note(PAGE, "Okapi", "striped legs")
    assert page_memory.probe(PAGE)["state"] == "green"
    Forgetting(vault).forget_host("wikipedia.org")
    assert page_memory.probe(PAGE)["state"] == "none"


def test_match_lists_exact_facts_and_each_document_once(page_memory: PageMemory, vault: Vault) -> None:
    fact = add_fact(vault, "okapis are related to giraffes", PAGE + "?utm_source=feed")
    long_article = "\n\n".join(f"Paragraph {i} about the okapi's habitat. " * 20 for i in range(12))
    save_document(vault, long_article, Origin(kind="library", url=PAGE, title="Okapi"))
    add_fact(vault, "something from another page", "https://en.wikipedia.org/wiki/Zebra")
    result = page_memory.match(PAGE, "Okapi")
    assert [f["id"] for f in result["facts"]] == [fact]  # document chunks never appear as facts
    assert len(result["documents"]) == 1 and result["documents"][0]["chunk_count"] > 1
    assert result["related"] == []  # no page context, no meaning matches


def test_related_are_meaning_matches_of_the_page_context_which_is_never_stored(
        vault: Vault, vault_path: Path, hybrid_search: SearchService, sites: SiteModes, model: Any) -> None:
    exact = add_fact(vault, "okapis were described in 1901", PAGE)
    related = add_fact(vault, "the giraffe's closest living relative lives in Congo rainforests",
                       "https://zoo.example.net/giraffes")
    add_fact(vault, "invoice 4411 is due on Friday", "https://billing.example.net/")
    backfill(vault, model)
    pm = PageMemory(vault, hybrid_search, sites)
    context = "PAGECONTEXT-91ab The okapi is a forest mammal, kin of giraffes, native to central Africa."
    result = pm.match(PAGE, "Okapi", page_context=context)
    pm.close()
    assert [f["id"] for f in result["facts"]] == [exact]
    assert result["related"] and result["related"][0]["id"] == related
    assert exact not in [r["id"] for r in result["related"]]
    vault.checkpoint()
    assert total_hits(vault_path, "PAGECONTEXT-91ab") == 0


def test_from_this_page_lists_every_project_and_related_keeps_the_wall(page_memory: PageMemory,
                                                                        vault: Vault) -> None:
    global_fact = add_fact(vault, "global okapi fact", PAGE)
    alpha = add_fact(vault, "alpha okapi fact", PAGE, project="alpha")
    beta = add_fact(vault, "beta okapi fact", PAGE, project="beta")
    add_fact(vault, "alpha okapi elsewhere", "https://zoo.example.net/", project="alpha")
    add_fact(vault, "beta okapi elsewhere", "https://zoo.example.net/", project="beta")
    for chosen in (None, "alpha"):
        result = page_memory.match(PAGE, page_context="okapi", project=chosen)
        assert {(f["id"], f["project"]) for f in result["facts"]} == {
            (global_fact, None), (alpha, "alpha"), (beta, "beta")}
        assert result["projects"] == ["alpha", "beta"]
    scoped = page_memory.match(PAGE, page_context="okapi elsewhere", project="alpha")
    assert {r["project"] for r in scoped["related"]} == {"alpha"}  # the picker scopes meaning matches
    assert page_memory.match(PAGE, page_context="okapi elsewhere")["related"] == []


def test_suggestions_complete_the_last_word(page_memory: PageMemory, vault: Vault) -> None:
    fact = add_fact(vault, "my passport number renewal is due in March", "https://x.example.com/")
    add_fact(vault, "unrelated note about lunch", "https://x.example.com/")
    assert [f["id"] for f in page_memory.suggest(PAGE, "passport ren")] == [fact]
    assert page_memory.suggest(PAGE, "") == []
    assert page_memory.suggest(PAGE, '"* OR NEAR(') == []  # any typed text is safe


def test_selection_requires_url_and_title_and_stamps_both(page_memory: PageMemory) -> None:
    fact = page_memory.selection(PAGE, "Okapi - Wikipedia", "The okapi is an even-toed ungulate.")
    assert (fact.source_url, fact.source_host, fact.title) == (PAGE, "en.wikipedia.org", "Okapi - Wikipedia")
    assert fact.source_kind == "selection" and fact.page_key
    with pytest.raises(InvalidInput, match="title"):
        page_memory.selection(PAGE, "  ", "text")
    with pytest.raises(InvalidInput, match="URL"):
        page_memory.selection("", "Okapi", "text")
    with pytest.raises(InvalidInput):
        page_memory.note("javascript:alert(1)", "x", "text")


def test_link_and_note_carry_provenance(page_memory: PageMemory) -> None:
    link = page_memory.link(PAGE, "Okapi")
    assert "Okapi" in link.text and PAGE in link.text and link.source_kind == "link"
    note = page_memory.note(PAGE, None, "remember the stripes", project="zoo")
    assert (note.project, note.source_url, note.tool) == ("zoo", PAGE, "extension")
    with pytest.raises(InvalidInput):
        page_memory.note(PAGE, "Okapi", "   ")


def test_library_from_html_drops_scripts_and_styles(page_memory: PageMemory, vault: Vault) -> None:
    html = ("<html><head><title>T</title><style>.x{color:red}</style></head><body>"
            "<h1>Okapi</h1><p>Lives in the &amp; Congo.</p><script>steal('SCRIPTCANARY')</script>"
            "<noscript>enable js</noscript></body></html>")
    doc = page_memory.library(PAGE, "Okapi", html=html)
    assert doc.page_key and doc.tier == "first_party" and doc.source_kind == "library"
    text = vault.read(lambda c: q.document_text(c, doc.id))
    assert text == "Okapi\n\nLives in the & Congo."
    facts = vault.read(lambda c: q.list_facts(c, FactFilter(project=ALL_PROJECTS)))
    assert facts == []  # a document is never a fact
    with pytest.raises(InvalidInput):
        page_memory.library(PAGE, "Okapi")


def test_html_to_text_keeps_paragraphs() -> None:
    assert html_to_text("<p>a  b</p><div>c<br>d</div><template>x</template>") == "a b\n\nc\n\nd"


def test_page_link_is_manual_and_survives_a_token_reindex(page_memory: PageMemory, vault: Vault) -> None:
    fact = add_fact(vault, "see page: https://example.com/token-page for details")
    linked = page_memory.page_link(fact, PAGE)
    assert (linked.page_url, linked.page_set_by) == (PAGE, "manual")
    vault.write(lambda c, ch: reindex_chunk(c, ch, fact))
    after = vault.read(lambda c: q.get_fact(c, fact, FactFilter(project=ALL_PROJECTS)))
    assert (after.page_url, after.page_set_by) == (PAGE, "manual")


def test_suggest_mode_reads_but_never_writes(page_memory: PageMemory, sites: SiteModes, vault: Vault,
                                             keyword_search: SearchService) -> None:
    add_fact(vault, "okapi fact", PAGE)
    sites.set_rule("wikipedia.org", "suggest")
    assert page_memory.match(PAGE)["facts"]
    assert page_memory.probe(PAGE)["state"] == "green"


def test_the_probe_cache_stays_bounded_over_ever_new_pages(page_memory: PageMemory, vault: Vault,
                                                          clock: ManualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    from vodou_desktop.governance import page_memory as pm_module

    monkeypatch.setattr(pm_module, "PROBE_CACHE_MAX", 40)
    add_fact(vault, "a note on the first page", "https://example.org/page/0")
    sizes = []
    for i in range(200):
        page_memory.probe(f"https://example.org/page/{i}")
        sizes.append(len(page_memory.probes))
        clock.advance(0.01)
    assert max(sizes) <= 41  # never more than the bound (+ the entry that triggers a prune)
    assert page_memory.probe("https://example.org/page/0")["state"] == "green"  # answers stay right
