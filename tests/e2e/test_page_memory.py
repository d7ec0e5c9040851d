"""Seed 000's live-page defects, in a real browser: the selection carries URL and title, the
toolbar goes green by the probe (once per page key per 30 s), a Library page is one document
under "From this page" and its chunks never show as facts."""

from __future__ import annotations

import pytest

from tests.e2e.browser import MENU_LIBRARY, MENU_SELECTION, Browser

pytestmark = pytest.mark.e2e
PROBE = ("GET", "/api/page-match/probe", 200)


def _match(browser: Browser, url: str) -> dict:
    status, body = browser.server.api("POST", "/api/page-match/match", {"url": url}, browser.token())
    assert status == 200, body
    return body


def test_selection_carries_url_and_title_and_turns_the_icon_green(paired: Browser) -> None:
    server = paired.server
    start = len(server.requests())
    article = paired.open(paired.url("wiki.example", "article.html") + "#nesting")
    paired.wait_icon(article, "neutral")
    paired.wait_for(lambda: PROBE in server.requests()[start:], "the first probe in the access log")
    article.evaluate("() => getSelection().selectAllChildren(document.getElementById('quote'))")
    selection = article.evaluate("() => getSelection().toString()")
    before = len(server.requests())

    outcome = paired.menu_click(article, MENU_SELECTION, selection)
    assert outcome["ok"], outcome
    paired.wait_icon(article, "green")

    page_url = paired.url("wiki.example", "article.html")
    facts = _match(paired, page_url)["facts"]
    assert len(facts) == 1 and selection.strip() in facts[0]["text"]
    assert facts[0]["source_url"].startswith(page_url)
    assert facts[0]["title"] == "Saltmarsh herons — Example Wiki"

    # A burst of tab switches inside 30 s: one probe per page key, not one per switch.
    other = paired.open(paired.url("wiki.example", "other.html?utm_source=feed"))
    paired.wait_icon(other, "neutral")
    for _ in range(4):
        article.bring_to_front()
        paired.wait_icon(article, "green")
        other.bring_to_front()
        paired.wait_icon(other, "neutral")
    probes = [r for r in server.requests()[before:] if r == PROBE]
    assert len(probes) == 2, probes  # the article after its write, the other page once
    counts = paired.diagnostics()["probes"]
    assert counts[page_url] == 2  # once on arrival, once after the write
    assert counts[paired.url("wiki.example", "other.html")] == 1  # tracking parameter dropped


def test_library_page_is_one_document_and_never_facts(paired: Browser) -> None:
    url = paired.url("wiki.example", "library.html")
    page = paired.open(url)
    paired.wait_icon(page, "neutral")
    paired.click_toolbar(page)  # the person's click lets the extension read this page
    outcome = paired.menu_click(page, MENU_LIBRARY)
    assert outcome["ok"], outcome
    paired.wait_icon(page, "green")

    panel = paired.panel()
    panel.wait_for_selector("#documents li")
    assert panel.locator("#documents li").count() == 1
    assert "Glacial landforms" in panel.inner_text("#documents")
    assert panel.locator("#facts li").count() == 0
    matched = _match(paired, url)
    assert len(matched["documents"]) == 1 and matched["documents"][0]["chunk_count"] > 1
    assert matched["facts"] == []
    status, found = paired.server.api("POST", "/api/page-match/suggest", {"url": url, "prefix": "moraine"},
                                      paired.token())
    assert status == 200 and all("Section" not in s["text"] for s in found["suggestions"])


def test_green_icon_means_the_side_panel_lists_every_project(paired: Browser) -> None:
    """Issue 14 defect 1: memories saved from a page in three projects turn the icon green, and the
    side panel lists all three with their projects; the project picked here files new notes."""
    url = paired.url("wiki.example", "notes.html")
    token = paired.token()
    for project in ("family", "thesis", "garden"):
        status, _ = paired.server.api("POST", "/api/notes", {"url": url, "text": f"A memory for {project}",
                                                             "project": project}, token)
        assert status == 201
    page = paired.open(url)
    paired.wait_icon(page, "green")
    panel = paired.panel()
    for project in ("family", "thesis", "garden"):
        panel.wait_for_selector(f"#facts li:has-text('A memory for {project}'):has-text('project {project}')")
    assert panel.locator("#facts li").count() == 3 and panel.is_hidden("#facts-empty")
    assert panel.locator("#project option").all_inner_texts() == [
        "No project (global)", "family", "garden", "thesis"]
    panel.select_option("#project", "thesis")
    panel.wait_for_selector("#message:has-text('project thesis')")
    panel.fill("#note", "Chapter two moves to May")
    panel.click("#send")
    panel.wait_for_selector("#facts li:has-text('Chapter two moves to May'):has-text('project thesis')")
    panel.reload()
    panel.wait_for_selector("#facts li:has-text('Chapter two')")
    assert panel.eval_on_selector("#project", "s => s.value") == "thesis"  # remembered for this site
