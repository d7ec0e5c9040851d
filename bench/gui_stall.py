"""The memory browser's longest GUI-thread stall while scrolling, searching and sorting a large vault.

    python -m bench.gui_stall [--memories 100000] [--no-freeze]

A heartbeat timer fires as often as the event loop lets it; the longest gap between two beats is the
longest time the GUI thread was busy (a stall a person would feel). Three runs in one process, on the
same generated vault (``data.sample_vault``, written as one import):

- idle: the event loop with nothing to do (the floor: timer and interpreter overhead);
- browser: the memory browser opened, then scrolled by page and to the end, a search with thousands
  of matches scrolled to its last, a sort by oldest, a project filter;
- synchronous: the same first listing read on the GUI thread, as a model that queried in ``data()``
  would (what the lazy model's workers keep off it).

The browser runs as in the app, whose startup objects are frozen out of Python's full garbage
collections once it has started (``--no-freeze``: as before). Offscreen and keyword search only (no
embedding model). Figures in bench/history/rounds-1-4.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from vodou_desktop import config  # noqa: E402
from vodou_desktop.data.sample_vault import fill_vault  # noqa: E402
from vodou_desktop.runtime import Runtime  # noqa: E402
from vodou_desktop.search.embedder import Embedder  # noqa: E402
from vodou_desktop.search.service import SearchService  # noqa: E402
from vodou_desktop.search.vectors import VectorIndex  # noqa: E402
from vodou_desktop.ui.browser.search_controller import Query, first_listing  # noqa: E402
from vodou_desktop.ui.browser.window import MemoryBrowser  # noqa: E402
from vodou_desktop.ui.ops import freeze_startup_objects  # noqa: E402
from vodou_desktop.ui.services import Services  # noqa: E402
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault  # noqa: E402


class Heartbeat:
    """The longest gap between two turns of the event loop while it runs."""

    def __init__(self) -> None:
        self.timer = QTimer(interval=0)
        self.timer.timeout.connect(self._beat)
        self.last = 0.0
        self.longest = 0.0
        self.beats = 0

    def _beat(self) -> None:
        now = time.perf_counter()
        if self.last:
            self.longest = max(self.longest, now - self.last)
        self.last = now
        self.beats += 1

    def start(self) -> None:
        self.last, self.longest, self.beats = 0.0, 0.0, 0
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return self.longest


def run_until(done: Callable[[], bool], limit_s: float = 120.0) -> None:
    clock = QElapsedTimer()
    clock.start()
    while not done():
        QApplication.processEvents()
        if clock.elapsed() > limit_s * 1000:
            raise TimeoutError("the browser did not get there in time")


def wait(ms: int) -> None:
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < ms:
        QApplication.processEvents()


def exercise(browser: MemoryBrowser, beat: Heartbeat) -> dict[str, float]:
    """Scroll by pages, jump to the end, search, scroll that to its end, sort, filter: the longest
    stall of each step."""
    tab, model = browser.memories, browser.memories.model
    phases: dict[str, float] = {}

    def mark(name: str) -> None:
        phases[name] = beat.longest
        beat.longest = 0.0

    bar = tab.view.verticalScrollBar()
    run_until(lambda: model.listing.complete and model.rowCount() > 0)
    mark("open and list every id")

    def scroll_through() -> None:
        run_until(lambda: model.listing.complete)
        for step in range(40):
            bar.setValue(bar.maximum() * step // 39)
            wait(15)
        run_until(lambda: model.result_at(model.rowCount() - 1) is not None)

    scroll_through()
    mark("scroll to the end")
    tab.search_box.setText("heron")
    run_until(lambda: model.searching and model.listing.complete)
    mark("search")
    scroll_through()
    mark("scroll the search to its end")
    tab.search_box.clear()
    run_until(lambda: not model.searching)
    tab.set_order("oldest")
    run_until(lambda: model.listing.order == "oldest")
    scroll_through()
    mark("sort by oldest and scroll")
    run_until(lambda: len(tab.filters.projects()) > 0)
    tab.filters.choose_project(tab.filters.projects()[0])
    run_until(lambda: model.listing.filt is not None and isinstance(model.listing.filt.project, str))
    scroll_through()
    mark("filter by project and scroll")
    return phases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--no-freeze", action="store_true",
                        help="leave the startup objects in Python's full garbage collections (as before)")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VODOU_HOME"] = tmp
        vault = Vault.open(Path(tmp) / "vault.db")
        started = time.perf_counter()
        fill_vault(vault, args.memories)
        print(f"vault: {args.memories:,} memories written in {time.perf_counter() - started:.1f} s")
        index = VectorIndex(vault)
        search = SearchService(vault, Embedder("none"), index)
        runtime = Runtime(config.Settings(), vault, search.embedder, index, search)
        services = Services.build(runtime)
        beat = Heartbeat()

        beat.start()
        wait(3000)
        idle = beat.stop()

        browser = MemoryBrowser(services)
        browser.resize(1100, 700)
        browser.show()
        if not args.no_freeze:
            print(f"startup objects frozen (as the app does once started): {freeze_startup_objects():,}")
        beat.start()
        started = time.perf_counter()
        phases = exercise(browser, beat)
        beat.stop()
        busy, took = max(phases.values()), time.perf_counter() - started

        everything = Query("", FactFilter(project=ALL_PROJECTS))
        beat.start()
        QTimer.singleShot(0, lambda: first_listing(search, everything))  # on the GUI thread
        wait(1500)
        synchronous = beat.stop()

        print(f"longest GUI-thread stall, idle event loop:           {idle * 1000:7.1f} ms")
        print(f"longest GUI-thread stall, browser scrolled/searched: {busy * 1000:7.1f} ms "
              f"({took:.1f} s of scrolling, searching, sorting and filtering)")
        print(f"one first listing read on the GUI thread instead:    {synchronous * 1000:7.1f} ms")
        for name, longest in phases.items():
            print(f"  {name:<32} {longest * 1000:7.1f} ms")
        browser.close()
        services.close()
        index.close()
        vault.close()
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
