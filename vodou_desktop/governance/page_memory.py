"""Page memory: what the side panel, the toolbar icon and the page actions do with one page.

Every method takes the page URL and is a ``@page_operation``: the site mode is resolved before the
body runs (see ``policy``). Reads go through ``vault.query`` readers; writes go through
``ingest.remember`` so every page write is stamped by the one provenance writer.

``page_context`` (text of the open page, sent by the panel for meaning matches) is used for one
search and is never stored or logged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from html.parser import HTMLParser
from typing import Any

from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.policy import current_resolution, page_operation
from vodou_desktop.governance.sitemodes import Resolution, SiteModes
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.pages import page_key
from vodou_desktop.search import keyword
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, Change, Document, Fact, FactFilter, Vault, projects_store
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import set_page_link

PROBE_TTL_S = 30.0
PROBE_CACHE_MAX = 4_096  # entries kept at most: a server that sees ever new pages must not grow
RELATED_K = 5
SUGGEST_K = 8
TOOL = "extension"


class ProbeCache:
    """Whether a page key has memory, cached 30 s per key (a burst of tab switches is one read).

    Any committed vault change that names the key (or comes from another process)
    drops the entry at once, so a new note turns the icon green without waiting.
    """

    def __init__(self, vault: Vault, clock: Callable[[], float] = time.monotonic, ttl: float = PROBE_TTL_S) -> None:
        self.vault = vault
        self.clock = clock
        self.ttl = ttl
        self.loads = 0  # vault reads made, for tests and diagnostics
        self._entries: dict[str, tuple[bool, float]] = {}
        self._generation = 0  # bumped by every invalidation: a read that raced one is not cached
        self._lock = threading.Lock()
        self._unsubscribe = vault.subscribe(self._on_change)

    def get(self, key: str) -> bool:
        now = self.clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now - entry[1] < self.ttl:
                return entry[0]
            generation = self._generation
        has = bool(self.vault.read(partial(q.page_has_memory, key=key, f=FactFilter(project=ALL_PROJECTS))))
        with self._lock:
            self.loads += 1
            if generation == self._generation:
                self._entries[key] = (has, now)
                if len(self._entries) > PROBE_CACHE_MAX:
                    self._prune(now)
        return has

    def _prune(self, now: float) -> None:
        """Drop expired entries, then the oldest until a quarter of the room is free."""
        self._entries = {k: v for k, v in self._entries.items() if now - v[1] < self.ttl}
        excess = len(self._entries) - PROBE_CACHE_MAX * 3 // 4
        if excess > 0:
            for key in sorted(self._entries, key=lambda k: self._entries[k][1])[:excess]:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)

    def _on_change(self, change: Change) -> None:
        with self._lock:
            if change.external or "*" in change.tables:
                self._generation += 1
                self._entries.clear()
                return
            if change.page_keys:
                self._generation += 1
            for key in change.page_keys:
                self._entries.pop(key, None)

    def close(self) -> None:
        self._unsubscribe()


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: scripts, styles and other non-content elements are dropped."""

    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
                       "article", "blockquote", "pre", "ul", "ol", "table", "header", "footer"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Readable text from HTML with the standard library's parser (no network, no scripts)."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    paragraphs = (" ".join(block.split()) for block in "".join(parser.parts).split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)


def project_names(conn: Any) -> list[str]:
    """Projects that hold memories or are mapped to a folder, by name (the panels' project picker)."""
    named = {name for name, _path in projects_store.all_projects(conn)}
    return sorted(named | set(q.count_facts_by_project(conn, FactFilter(project=ALL_PROJECTS))))


def _empty_match(resolution: Resolution) -> dict[str, Any]:
    return {"mode": resolution.mode, "reason": resolution.reason, "facts": [], "documents": [], "related": [],
            "projects": []}


def _empty_probe(resolution: Resolution) -> dict[str, Any]:
    return {"state": None, "mode": resolution.mode}


def _required(value: str | None, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} is required")
    return value.strip()


class PageMemory:
    """The page operations the bridge exposes. Every method here is governed by the site mode."""

    def __init__(self, vault: Vault, search: SearchService, sites: SiteModes,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.vault = vault
        self.search = search
        self.sites = sites
        self.probes = ProbeCache(vault, clock)

    def close(self) -> None:
        self.probes.close()

    # -- reads ------------------------------------------------------------------------------
    @page_operation("read", empty=_empty_match)
    def match(self, url: str, title: str | None = None, page_context: str | None = None,
              project: str | None = None) -> dict[str, Any]:
        """Memory for the side panel.

        "From this page" is the owner's view and exactly the set the probe counts: every fact and
        document saved from this page, from every project, each carrying its ``project``. The
        chosen ``project`` scopes only the meaning matches (``related``), behind the project wall.
        ``projects`` names the projects that hold memories, for the panel's project picker.
        """
        resolution = current_resolution()
        key = page_key(url)
        owner = FactFilter(project=ALL_PROJECTS)
        facts, documents, projects = self.vault.read(lambda c: (
            q.facts_for_page(c, key, owner), q.documents_for_page(c, key, owner),
            project_names(c)))
        related: list[dict[str, Any]] = []
        query = " ".join(p for p in (title, page_context) if p)
        if page_context and query.strip():
            exact = {f.id for f in facts}
            results = self.search.search(query, FactFilter(project=project), k=RELATED_K + len(exact))
            related = [r.as_json() for r in results if r.fact.id not in exact][:RELATED_K]
        return {"mode": resolution.mode, "reason": resolution.reason, "facts": [f.as_json() for f in facts],
                "documents": [d.as_json() for d in documents], "related": related, "projects": projects}

    @page_operation("read", empty=_empty_probe)
    def probe(self, url: str) -> dict[str, Any]:
        """The toolbar icon: ``green`` when exact facts or documents were saved from this page."""
        state = "green" if self.probes.get(page_key(url)) else "none"
        return {"state": state, "mode": current_resolution().mode}

    @page_operation("suggest")
    def suggest(self, url: str, prefix: str, project: str | None = None) -> list[dict[str, Any]]:
        """Typing suggestions: facts containing words that start with what is being typed."""
        words = keyword.terms(prefix or "")
        if not words:
            return []
        expr = " ".join('"' + w.replace('"', '""') + '"' for w in words[:-1])
        expr = f'{expr} "{words[-1].replace(chr(34), chr(34) * 2)}"*'.strip()
        filt = FactFilter(project=project)

        def read(conn):  # type: ignore[no-untyped-def]
            hits = q.keyword_search(conn, expr, filt, SUGGEST_K)
            by_id = {f.id: f for f in q.facts_by_ids(conn, [i for i, _ in hits], filt)}
            return [by_id[i] for i, _ in hits if i in by_id]

        return [f.as_json() for f in self.vault.read(read)]

    # -- writes -----------------------------------------------------------------------------
    def _remember(self, text: str, kind: str, url: str, title: str | None, project: str | None) -> Fact:
        origin = Origin(kind=kind, tier="first_party", url=url, title=title, tool=TOOL)
        fact_id = remember(self.vault, text, origin, kind=kind, project=project)
        return replace(self._fact(fact_id), extra={"secrets_removed": list(fact_id.secrets_removed)})

    def _fact(self, fact_id: int) -> Fact:
        return self.vault.read(lambda c: q.get_fact(c, fact_id, FactFilter(project=ALL_PROJECTS)))

    @page_operation("write")
    def note(self, url: str, title: str | None, text: str, project: str | None = None) -> Fact:
        """A note typed on this page."""
        return self._remember(_required(text, "the note's text"), "note", url, title, project)

    @page_operation("write")
    def link(self, url: str, title: str | None, text: str | None = None, project: str | None = None) -> Fact:
        """Remember the page itself as a link (with an optional comment)."""
        label = (title or "").strip() or url
        body = f"{label} — {url}" + (f"\n{text.strip()}" if text and text.strip() else "")
        return self._remember(body, "link", url, title, project)

    @page_operation("write")
    def selection(self, url: str, title: str, text: str, project: str | None = None) -> Fact:
        """Selected text, with the tab's URL and title (seed 000, defect 2: both are required)."""
        title = _required(title, "the page title")
        return self._remember(_required(text, "the selected text"), "selection", url, title, project)

    @page_operation("write")
    def library(self, url: str, title: str, text: str | None = None, html: str | None = None,
                project: str | None = None) -> Document:
        """Add the page to the Library as a document (chunked, never shown as facts)."""
        if text is None and html is None:
            raise InvalidInput("give the page's text or its HTML")
        body = text if text is not None else html_to_text(html or "")
        origin = Origin(kind="library", tier="first_party", url=url, title=title, tool=TOOL)
        doc_id = save_document(self.vault, _required(body, "the page's text"), origin, project=project)
        key = page_key(url)
        docs = self.vault.read(partial(q.documents_for_page, key=key, f=FactFilter(project=ALL_PROJECTS)))
        return replace(next(d for d in docs if d.id == doc_id), extra={"secrets_removed": list(doc_id.secrets_removed)})

    @page_operation("write")
    def page_link(self, fact_id: int, url: str) -> Fact:
        """Link a fact to this page with manual precedence (GOV-9): no token re-index overrides it."""
        self.vault.write(lambda c, ch: set_page_link(c, ch, int(fact_id), url, "manual"))
        return self.vault.read(lambda c: q.get_fact(c, int(fact_id), FactFilter(project=ALL_PROJECTS,
                                                                               include_forgotten=True)))
