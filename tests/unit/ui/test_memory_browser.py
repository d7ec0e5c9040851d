"""The memory browser (UI-4) over a real vault: live search, filters, details, models."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from vodou_desktop.data.sample_vault import fill_vault
from vodou_desktop.governance.ages import LONGEST_AGES
from vodou_desktop.ingest.dedupe import dedupe_scan
from vodou_desktop.ingest.remember import Origin, correct, remember
from vodou_desktop.ui.browser.results_model import ResultsModel
from vodou_desktop.ui.browser.window import DEFAULT_SIZE, MemoryBrowser
from vodou_desktop.ui.screenshots import cut_width, elided_cells, memory_share
from vodou_desktop.vault.query import Scope
from vodou_desktop.words import LIST_KINDS, kind_words


def shown_texts(browser: MemoryBrowser) -> list[str]:
    return [r.fact.text for r in browser.memories.model.results]


def test_typing_a_query_shows_results(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)
    qtbot.keyClicks(browser.memories.search_box, "pnpm")
    qtbot.waitUntil(lambda: shown_texts(browser) == ["Use pnpm, not npm, in the web repository"])
    model = browser.memories.model
    assert model.columns == ("Memory", "Project", "Kind", "Source", "Age")  # why it matched: a tooltip
    assert model.why(0) == "matched 'pnpm' · you wrote it"
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole).endswith("Why it matched: matched 'pnpm' · you wrote it")


def test_filters_change_the_results(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    tab = browser.memories
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)
    tab.filters.tier.setCurrentText("imported")
    qtbot.waitUntil(lambda: shown_texts(browser) == ["The quarterly report is due on the fifth"])
    tab.filters.tier.setCurrentText("Any trust")
    tab.filters.host.setText("rust-lang.org")
    qtbot.waitUntil(lambda: shown_texts(browser) == ["Rust borrow checker notes: lifetimes elide in simple cases"])
    tab.filters.host.clear()
    tab.filters.choose_global_only()
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 3)
    assert all(r.fact.project is None for r in tab.model.results)
    assert tab.filters.project.currentText() == "Global only (3)"
    qtbot.waitUntil(lambda: tab.filters.choose_project("infra"))  # only this project: the count its name says
    qtbot.waitUntil(lambda: shown_texts(browser) == ["The staging database password rotates every Monday"])
    assert tab.filters.project.currentText() == "infra (1)" and tab.filters.scope.currentText() == \
        "Only this project (1)"
    tab.filters.scope.setCurrentIndex(tab.filters.scope.findData(Scope.PROJECT_AND_GLOBAL))
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 4)  # infra + the global ones, never "web"
    assert "Use pnpm, not npm, in the web repository" not in shown_texts(browser)
    assert tab.filters.scope.currentText() == "This project + global (4)"
    tab.filters.choose_all()
    assert not tab.filters.scope.isEnabled()
    tab.filters.kind.setCurrentText("preference")
    qtbot.waitUntil(lambda: shown_texts(browser) == ["Prefers dark mode in every editor"])


def test_a_bad_site_filter_is_explained_not_raised(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.memories.filters.host.setText("not a host/")
    assert "not a host" in browser.memories.filters.problem.text()
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)


def test_new_memory_appears_without_a_refresh(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)
    remember(services.runtime.vault, "A brand new fact about herons", Origin("cli"))
    qtbot.waitUntil(lambda: "A brand new fact about herons" in shown_texts(browser))


def test_details_show_provenance_and_score_explanation(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    tab = browser.memories
    qtbot.keyClicks(tab.search_box, "borrow checker")
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 1)
    first = tab.model.index(0, 0)
    assert tab.model.why(0) == "matched 'borrow', 'checker' · you wrote it"
    assert "Why it matched: matched 'borrow', 'checker'" in first.data(Qt.ItemDataRole.ToolTipRole)
    assert tab.model.rowCount(first) == 0  # no expand arrows
    tab.view.setCurrentIndex(first)
    qtbot.waitUntil(lambda: tab.details.details is not None)
    body = tab.details.text()
    assert 'href="https://doc.rust-lang.org/book/"' in body
    assert "just now" in body and "Why it matched:</b> matched 'borrow'" in body
    # the ranking's factors, in plain names, behind a disclosure that starts collapsed
    assert tab.details.ranked.isVisibleTo(tab) and not tab.details.ranking.isVisibleTo(tab)
    ranking = tab.details.ranking.text()
    assert "Word match (0-1)" in ranking and "Source weight" in ranking
    tab.details.ranked.click()
    assert tab.details.ranking.isVisibleTo(tab)
    for raw in ("keyword_bm25", "alpha", "fused", "tier_weight"):
        assert raw not in body + ranking


def test_browsing_shows_project_kind_source_and_pin_without_a_score(qtbot, services, seeded):
    from vodou_desktop.ingest import remember as ingest

    ingest.pin(services.runtime.vault, seeded["Prefers dark mode in every editor"], True)
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 5)
    model = browser.memories.model
    assert model.columns == ("Memory", "Project", "Kind", "Source", "Age")
    rows = {r.fact.text: i for i, r in enumerate(model.results)}
    pnpm = rows["Use pnpm, not npm, in the web repository"]
    assert [model.index(pnpm, c).data() for c in range(1, 4)] == ["web", "decision", "command line"]
    assert model.index(pnpm, 3).data(Qt.ItemDataRole.ToolTipRole) == "you wrote it (command line)"  # in full
    wiki = rows["The staging database password rotates every Monday"]
    assert [model.index(wiki, c).data() for c in range(1, 4)] == ["infra", "fact", "wiki.example.com"]
    chat = rows["The quarterly report is due on the fifth"]
    assert model.index(chat, 1).data() == "global" and model.index(chat, 3).data() == "ChatGPT import"
    qtbot.waitUntil(lambda: any(r.fact.tier == "pinned" for r in model.results))
    pinned = next(i for i, r in enumerate(model.results) if r.fact.tier == "pinned")
    assert model.index(pinned, 0).data() == "★ Prefers dark mode in every editor"


def test_no_project_kind_source_or_age_is_cut_at_the_default_size(qtbot, services):
    """At 1100×700 the metadata columns show their words whole ("232 days a…" was cut): every site,
    project and kind of a generated vault, every age the formatter can give; the text keeps ≥ 45 %."""
    vault = services.runtime.vault
    fill_vault(vault, 300)
    remember(vault, "Written a moment ago by hand", Origin("cli"), project="household")
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    browser.resize(*DEFAULT_SIZE)
    browser.show()
    view, model = browser.memories.view, browser.memories.model
    qtbot.waitUntil(lambda: model.result_at(0) is not None and bool(browser.memories.filters.projects()))
    qtbot.waitUntil(lambda: all(model.index(r, 1).data() != "…" for r in range(30)))
    assert (browser.width(), browser.height()) == DEFAULT_SIZE
    assert elided_cells(view) == []
    metrics, room = view.fontMetrics(), {c: view.columnWidth(c) - cut_width(view) for c in range(1, 5)}
    assert all(metrics.horizontalAdvance(age) <= room[4] for age in LONGEST_AGES)
    assert all(metrics.horizontalAdvance(kind_words(k)) <= room[2] for k in LIST_KINDS)
    assert memory_share(browser) >= 0.45
    browser.memories.set_order("oldest")  # the ages of the oldest (years) and their sites
    qtbot.waitUntil(lambda: model.listing.order == "oldest" and model.result_at(0) is not None)
    qtbot.waitUntil(lambda: all(model.index(r, 1).data() != "…" for r in range(30)))
    assert elided_cells(view) == []


def test_results_model_passes_the_model_tester(qtbot, services, seeded):
    model = ResultsModel()
    tester = ModelTester(None)
    tester.check(model)
    results = services.runtime.search.search("rules report database", k=10)
    assert results
    model.set_results(results)
    tester.check(model)
    model.set_results([])
    tester.check(model)


def test_library_lists_each_document_once(qtbot, services, seeded):
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: browser.library.model.rowCount() == 1)
    assert browser.library.model.index(0, 0).data() == "The Rust Book"
    ModelTester(None).check(browser.library.model)


def _select(qtbot, browser: MemoryBrowser, text: str) -> None:  # type: ignore[no-untyped-def]
    tab = browser.memories
    row = shown_texts(browser).index(text)
    tab.view.setCurrentIndex(tab.model.index(row, 0))
    qtbot.waitUntil(lambda: tab.details.details is not None and tab.details.details.fact.text == text)


@pytest.mark.model
def test_details_show_a_real_fact_group_with_its_canonical(qtbot, services, model):
    vault = services.runtime.vault
    kept = remember(vault, "The office moved to Lyon in March", Origin("cli"))
    copy = remember(vault, "The office moved to Lyon in March.", Origin("import_chatgpt", tier="import"))
    remember(vault, "Herons nest in colonies", Origin("cli"))
    report = dedupe_scan(vault, model)
    assert report.groups == [[kept, copy]]
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 3)
    _select(qtbot, browser, "The office moved to Lyon in March.")
    details = browser.memories.details
    assert [f.id for f in details.details.group] == [kept]
    assert "<p><b>Near-duplicates of this memory</b></p><ul><li>The office moved to Lyon in March (the one ranked " \
        "first)</li></ul>" \
        in details.text()
    _select(qtbot, browser, "The office moved to Lyon in March")
    assert [f.id for f in details.details.group] == [copy]
    assert "<li>The office moved to Lyon in March.</li>" in details.text()


def test_revision_history_lists_every_real_revision(qtbot, services, seeded):
    vault = services.runtime.vault
    first = seeded["Prefers dark mode in every editor"]
    second = correct(vault, first, "Prefers dark mode in editors and terminals")
    correct(vault, second, "Prefers dark mode everywhere")
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: "Prefers dark mode everywhere" in shown_texts(browser))
    assert not any(t.startswith("Prefers dark mode in") for t in shown_texts(browser))  # superseded: never shown
    _select(qtbot, browser, "Prefers dark mode everywhere")
    body = browser.memories.details.text()
    assert ("<ol><li>r1: Prefers dark mode in every editor <i>(superseded — never recalled)</i></li>"
            "<li>r2: Prefers dark mode in editors and terminals <i>(superseded — never recalled)</i></li>"
            "<li><b>r3: Prefers dark mode everywhere</b></li></ol>") in body


def test_an_open_browser_follows_a_grouping_write(qtbot, services, model):
    """Grouping writes report the group columns (not the chunks' text): the browser still refreshes."""
    vault = services.runtime.vault
    remember(vault, "The office moved to Lyon in March", Origin("cli"))
    remember(vault, "The office moved to Lyon in March.", Origin("import_chatgpt", tier="import"))
    browser = MemoryBrowser(services)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: len(shown_texts(browser)) == 2)
    refreshed: list[bool] = []
    plain = browser.memories.refresh
    browser.memories.refresh = lambda: (refreshed.append(True), plain())[1]  # type: ignore[method-assign]
    assert dedupe_scan(vault, model).changed == 2
    qtbot.waitUntil(lambda: bool(refreshed))
