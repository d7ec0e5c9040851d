"""Live search for the memory browser: computed in a worker, delivered by signal, never waited for.

A request starts its query at once when none is running (the first keystroke, a header click, a
filter); requests made while one runs coalesce into the last of them, started as soon as the running
one answers. No fixed wait: a 10 ms query shows its results 10 ms after the key, and fast typing
never queues more than one query behind the running one. Answers carry a generation number; an
answer overtaken by a newer request is dropped, so results never arrive out of order.

A query's answer reaches every memory it matches (``Listing``): browsing, the first page with the
total, then every id in the chosen order (sorted in SQL by the vault's query builder); searching,
the ranking of ``SearchService.search_all`` (its first results are ``search``'s), then every further
keyword match; the operators typed in the box (``project:birds``, ``kind:``, ``site:``, ``after:``,
``before:``) are read there, as ``vodou mem search`` reads them, narrowing the filters, never widening.
Rows are read a page at a time (``read_page``) as the view shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from vodou_desktop.search.service import SearchResult, SearchService
from vodou_desktop.ui.browser.results_model import PAGE, Listing
from vodou_desktop.ui.ops import Ops, failure_words
from vodou_desktop.vault import FactFilter, Vault
from vodou_desktop.vault import query as q


@dataclass(frozen=True)
class Query:
    text: str
    filt: FactFilter
    order: str = "newest"  # a key of ``query.FACT_ORDERS``, or "relevance" (a search's own order)

    @property
    def searching(self) -> bool:
        return bool(self.text.strip())


def first_listing(search: SearchService, query: Query) -> Listing:
    """The query's first answer: a search's whole ranking, or the first page of memories and the
    total (their other ids follow from ``all_ids``)."""
    if query.searching:
        return _search_listing(search, query)

    def read(conn):  # type: ignore[no-untyped-def]
        ids = q.ordered_fact_ids(conn, query.filt, query.order, PAGE)
        total = len(ids) if len(ids) < PAGE else q.count_facts(conn, query.filt)
        facts = {f.id: SearchResult(f, 0.0, {"path": "recent"}) for f in q.facts_by_ids(conn, ids, query.filt)}
        return Listing(ids, facts, total, len(ids) >= total, order=query.order, filt=query.filt)

    return search.vault.read(read)


def _search_listing(search: SearchService, query: Query) -> Listing:
    found = search.search_all(query.text, query.filt, operators=True)  # the CLI's and MCP's one path
    rows = {r.fact.id: r for r in found.ranked}
    ids = [r.fact.id for r in found.ranked] + [i for i, _ in found.more]
    if query.order != "relevance":
        ids = search.vault.read(lambda conn: q.ordered_fact_ids(conn, query.filt, query.order, -1, ids))
    return Listing(ids, rows, len(ids), True, True, query.text, scores=dict(found.more),
                   order=query.order, filt=query.filt)


def all_ids(vault: Vault, query: Query) -> list[int]:
    return vault.read(lambda conn: q.ordered_fact_ids(conn, query.filt, query.order))


def read_page(vault: Vault, filt: FactFilter, ids: list[int], scores: dict[int, float]) -> list[SearchResult]:
    """The rows of one page; a further keyword match says so in its factors ("matched 'heron'")."""
    facts = vault.read(lambda conn: q.facts_by_ids(conn, ids, filt))
    return [SearchResult(f, 0.0, {"path": "keyword", "keyword_bm25": scores[f.id]} if f.id in scores
                         else {"path": "recent"}) for f in facts]


class SearchController(QObject):
    listing_ready = Signal(object)  # Listing
    ids_ready = Signal(int, object)  # generation, list[int]: every id of a browsing listing
    busy_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, search: SearchService, ops: Ops, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._search, self._ops = search, ops
        self._query = Query("", FactFilter())
        self._generation = 0
        self._running = 0
        self._in_flight = False  # a first listing is being read
        self._waiting = False  # a request came while it was: run the last one when it answers
        self.started = 0  # first listings started (what coalescing saves is visible in tests)

    @property
    def query(self) -> Query:
        return self._query

    def request(self, query: Query) -> None:
        """Ask for ``query``: now when nothing runs, else as soon as the running query answers (only
        the last of the requests made meanwhile runs)."""
        self._query = query
        if self._in_flight:
            self._waiting = True
            self._generation += 1  # the running answer is stale already: drop it when it comes
        else:
            self._start()

    def refresh(self) -> None:
        """Run the current query again (the vault changed)."""
        self.request(self._query)

    def _start(self) -> None:
        self._generation += 1
        self._in_flight, self._waiting = True, False
        self.started += 1
        generation, query, search = self._generation, self._query, self._search
        self._set_running(+1)
        self._ops.run(lambda: first_listing(search, query), lambda listing: self._deliver(generation, listing),
                      on_failure=lambda exc: self._fail(generation, exc), owner=self)

    def _answered(self) -> bool:
        """A first listing answered: start the request that waited for it (True), if any."""
        self._in_flight = False
        if self._waiting:
            self._start()
            return True
        return False

    def _deliver(self, generation: int, listing: Listing) -> None:
        self._set_running(-1)
        if self._answered() or generation != self._generation:
            return
        listing.generation = generation
        self.listing_ready.emit(listing)
        if not listing.complete:
            self._read_ids(generation)

    def _read_ids(self, generation: int) -> None:
        vault, query = self._search.vault, self._query
        self._set_running(+1)
        self._ops.run(lambda: all_ids(vault, query), lambda ids: self._ids(generation, ids),
                      on_failure=lambda exc: self._fail(generation, exc, first=False), owner=self)

    def _ids(self, generation: int, ids: list[int]) -> None:
        self._set_running(-1)
        if generation == self._generation:
            self.ids_ready.emit(generation, ids)

    def read_page(self, generation: int, listing: Listing, page: int, ids: list[int],
                  on_read: object) -> None:
        """Read one page's rows off the GUI thread; ``on_read(generation, page, results)``."""
        vault, filt, scores = self._search.vault, listing.filt or self._query.filt, listing.scores
        self._ops.run(lambda: read_page(vault, filt, ids, scores),
                      lambda results: on_read(generation, page, results),  # type: ignore[operator]
                      on_failure=lambda exc: self._page_failed(generation, exc), owner=self)

    def _page_failed(self, generation: int, exc: BaseException) -> None:
        if generation == self._generation:
            self.failed.emit(failure_words(exc, self._ops.vault_path))

    def _fail(self, generation: int, exc: BaseException, first: bool = True) -> None:
        self._set_running(-1)
        if first and self._answered():
            return
        if generation == self._generation:
            self.failed.emit(failure_words(exc, self._ops.vault_path))

    def _set_running(self, delta: int) -> None:
        before = self._running > 0
        self._running += delta
        if (self._running > 0) != before:
            self.busy_changed.emit(self._running > 0)
