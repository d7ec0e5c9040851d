"""Live search for the memory browser: debounced, computed in a worker, delivered by signal.

Each keystroke restarts a short timer; when it fires, the query runs as an op off the GUI thread.
Answers carry a generation number and a stale answer (a newer query was started) is dropped, so
results never arrive out of order.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from vodou_desktop.search.service import SearchResult, SearchService
from vodou_desktop.ui.ops import Ops
from vodou_desktop.vault import FactFilter
from vodou_desktop.vault import query as q

DEBOUNCE_MS = 200
RESULT_LIMIT = 100


@dataclass(frozen=True)
class Query:
    text: str
    filt: FactFilter
    k: int = RESULT_LIMIT


def run_query(search: SearchService, query: Query) -> list[SearchResult]:
    """A search for text; with no text, the newest memories under the same filter."""
    if query.text.strip():
        return search.search(query.text, query.filt, k=query.k)
    facts = search.vault.read(lambda conn: q.list_facts(conn, query.filt, limit=query.k))
    return [SearchResult(fact, 0.0, {"path": "recent"}) for fact in facts]


class SearchController(QObject):
    results_ready = Signal(object)  # list[SearchResult]
    busy_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, search: SearchService, ops: Ops, parent: QObject | None = None,
                 debounce_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self._search, self._ops = search, ops
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms)
        self._timer.timeout.connect(self._start)
        self._query = Query("", FactFilter())
        self._generation = 0
        self._running = 0

    def request(self, query: Query) -> None:
        """Ask for ``query``; only the last request within the debounce window runs."""
        self._query = query
        self._timer.start()

    def refresh(self) -> None:
        """Re-run the current query now (the vault changed)."""
        self._timer.stop()
        self._start()

    def _start(self) -> None:
        self._generation += 1
        generation, query, search = self._generation, self._query, self._search
        self._set_running(+1)
        self._ops.run(lambda: run_query(search, query), lambda results: self._deliver(generation, results),
                      on_failure=lambda exc: self._fail(generation, exc), owner=self)

    def _deliver(self, generation: int, results: list[SearchResult]) -> None:
        self._set_running(-1)
        if generation == self._generation:
            self.results_ready.emit(results)

    def _fail(self, generation: int, exc: BaseException) -> None:
        self._set_running(-1)
        if generation == self._generation:
            self.failed.emit(str(exc))

    def _set_running(self, delta: int) -> None:
        before = self._running > 0
        self._running += delta
        if (self._running > 0) != before:
            self.busy_changed.emit(self._running > 0)
