"""The Qt-free services of one running Vodou (CLI command, headless server, or the tray app).

``Runtime.open`` builds them in order: settings, vault, embedder (background), vector index,
search. The tray app's composition root wraps this with Qt; the CLI and ``vodou serve`` use it
as is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vodou_desktop import config, paths
from vodou_desktop.ingest.dedupe import group_via_index, recheck_groups_once
from vodou_desktop.ingest.redate import redate_once
from vodou_desktop.search.backfill import Backfiller
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Vault

log = logging.getLogger(__name__)


def make_embedder(choice: str) -> Embedder:
    """The embedder for ``choice`` ("default", "none" or a model folder); tests share one model here."""
    return Embedder(choice)


class ProgressRelay:
    """``(done, total)`` of work running on another thread (the background embedding), passed on to
    whoever listens; the app's status bar listens through a Qt signal. ``last`` is the latest report."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[int, int], None]] = []
        self._lock = threading.Lock()
        self.last: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        self.last = (done, total)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(done, total)

    def listen(self, listener: Callable[[int, int], None]) -> Callable[[], None]:
        """Call ``listener`` on every report (on the reporting thread); returns how to stop."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop


@dataclass
class Runtime:
    settings: config.Settings
    vault: Vault
    embedder: Embedder
    index: VectorIndex
    search: SearchService
    backfiller: Backfiller | None = None
    # the one-time checks of what older rules wrote: fact groups, then dated memories' words (``_check_once``)
    recheck: threading.Thread | None = None
    stopping: threading.Event = field(default_factory=threading.Event)  # set by ``close``
    extras: dict[str, object] = field(default_factory=dict)
    # the background embedding's progress: new memories, and every memory again after a model change
    embedding_progress: ProgressRelay = field(default_factory=ProgressRelay)

    @classmethod
    def open(cls, vault_path: str | Path | None = None, *, embedder: Embedder | str | None = None,
             background_backfill: bool = False) -> Runtime:
        settings = config.load()
        path = paths.vault_path(vault_path)
        if path.parent == paths.data_dir():  # the default location is ours to create
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        vault = Vault.open(path)
        try:
            if background_backfill:  # a long-running app checks the vault at start, not at its first write
                vault.check_integrity()
            if not isinstance(embedder, Embedder):
                embedder = make_embedder(embedder or config.embedder_choice(settings))
            embedder.start()
            index = VectorIndex(vault, model=embedder.model_id)  # this model's vectors only
            if background_backfill:  # a long-running app: never wait at start for 1.5 GB of vectors
                threading.Thread(target=index.load, name="vodou-index-load", daemon=True).start()
            else:
                index.load()
            search = SearchService(vault, embedder, index)
            runtime = cls(settings, vault, embedder, index, search)
            if background_backfill:
                runtime.start_backfill()
                runtime.recheck = threading.Thread(target=runtime._check_once, name="vodou-regroup", daemon=True)
                runtime.recheck.start()
            return runtime
        except BaseException:
            vault.close()
            raise

    def start_backfill(self) -> Backfiller:
        """Keep embeddings complete in the background (new memories; all of them after a model change),
        reporting to ``embedding_progress``."""
        self.backfiller = Backfiller(self.vault, self.embedder, progress=self.embedding_progress,
                                     embedded=self.group_new_facts).start()
        return self.backfiller

    def group_new_facts(self, chunk_ids: list[int]) -> None:
        """Once new chunks have vectors, join near-duplicates to their fact group (ING-2, on write)."""
        group_via_index(self.vault, self.index, chunk_ids)

    def _check_once(self) -> None:
        self._recheck_groups()
        self._redate()

    def _redate(self) -> None:
        """Dated memories written under older rules get the words of the days they point at, once per
        vault (``redate_once``); ``close`` stops it between two writes, and the next start goes on."""
        try:
            changed = redate_once(self.vault, self.stopping)
        except Exception:  # the vault closed meanwhile, or a read failed: the next start tries again
            log.warning("dated memories not given the words of the days they point at", exc_info=True)
            return
        if changed:
            log.info("dated memories given the words of the days they point at: %d", changed)

    def _recheck_groups(self) -> None:
        """Groups formed under older grouping rules checked again, once per vault (``recheck_groups``)."""
        try:
            report = recheck_groups_once(self.vault, self.embedder.model_id)
        except Exception:  # the vault closed meanwhile, or a read failed: the next start tries again
            log.warning("fact groups not checked again under the current rules", exc_info=True)
            return
        if report is not None and report.groups:
            log.info("fact groups checked again under the current rules: %d parts of split groups", len(report.groups))

    def close(self) -> None:
        self.stopping.set()
        if self.recheck is not None:
            self.recheck.join(timeout=30)
        if self.backfiller:
            self.backfiller.stop()
        self.embedder.close()
        self.index.close()
        self.vault.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
