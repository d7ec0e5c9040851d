"""Embedding chunks that were written before the model was ready (or while it was off).

Until a chunk is embedded the keyword path finds it; ``backfill`` embeds in batches, reports
progress and stops promptly when cancelled. ``Backfiller`` runs it in a thread whenever the model
becomes ready or new chunks arrive.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial

from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import set_embeddings

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]  # (done, total)


def backfill(vault: Vault, embedder: Embedder, *, batch: int = 128, progress: Progress | None = None,
             cancel: threading.Event | None = None, after: int = 0, limit: int | None = None,
             embedded: Callable[[list[int]], None] | None = None) -> int:
    """Embed chunks without an embedding (ids above ``after``); returns how many were embedded."""
    if not embedder.ready:
        return 0
    total = vault.read(q.count_unembedded) if limit is None else limit
    done = 0
    if progress:
        progress(0, total)
    while not (cancel and cancel.is_set()):
        size = batch if limit is None else min(batch, limit - done)
        rows = vault.read(partial(q.unembedded, limit=size, after_id=after)) if size > 0 else []
        if not rows:
            break
        vectors = embedder.encode([text for _, text in rows])
        items = list(zip([i for i, _ in rows], vectors, strict=True))
        vault.write(partial(set_embeddings, items=items, model=embedder.model_name))
        if embedded:
            embedded([i for i, _ in rows])
        done += len(rows)
        after = rows[-1][0]
        if progress:
            progress(done, max(total, done))
    return done


class Backfiller:
    """Keeps embeddings complete in the background: wakes on model ready and on new chunks."""

    def __init__(self, vault: Vault, embedder: Embedder, progress: Progress | None = None,
                 embedded: Callable[[list[int]], None] | None = None) -> None:
        self._vault, self._embedder, self._progress = vault, embedder, progress
        self._embedded = embedded
        self._wake = threading.Event()
        self._cancel = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="vodou-backfill", daemon=True)
        self._unsubscribe = vault.subscribe(self._on_change)
        embedder.on_state(lambda state: self._wake.set())
        self.idle = threading.Event()

    def start(self) -> Backfiller:
        self._wake.set()
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop the current run; it resumes at the next wake-up."""
        self._cancel.set()

    def stop(self) -> None:
        self._stop = True
        self._cancel.set()
        self._wake.set()
        self._unsubscribe()
        self._thread.join(timeout=10)

    def _on_change(self, change: Change) -> None:
        if "chunks" in change.tables or "documents" in change.tables or change.external:
            self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                return
            self.idle.clear()
            self._cancel.clear()
            try:
                backfill(self._vault, self._embedder, progress=self._progress, cancel=self._cancel,
                         embedded=self._embedded)
            except Exception:
                log.exception("embedding backfill failed; will retry on the next change")
            self.idle.set()
