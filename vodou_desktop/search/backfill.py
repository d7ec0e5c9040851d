"""Embedding chunks that were written before the model was ready (or while it was off).

Until a chunk is embedded the keyword path finds it; ``backfill`` embeds in batches, reports
progress and stops promptly when cancelled. ``Backfiller`` runs it in a thread whenever the model
becomes ready or new chunks arrive.

A model change (Settings or config choose another model) is the same work: ``reembed`` replaces,
in batches and with progress, every vector of another model by one of the current model. Until a
chunk is re-embedded the vector index leaves it out (it holds one model's vectors only) and the
keyword path finds it. When a pass finishes, the vault records that all its vectors are of this
model (settings row ``vectors_model``), so later wake-ups skip the scan; any vector later written
by another model clears that record (``set_embeddings``), and the next pass looks again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from functools import partial
from typing import Any

import numpy as np

from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import VECTORS_MODEL_SETTING, set_embeddings
from vodou_desktop.vault.settings_store import get_setting, set_setting

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]  # (done, total)
SETTLE_S = 0.2  # after a wake-up, wait until writes have paused this long before embedding...
MAX_SETTLE_S = 1.0  # ...but no longer than this after the first of them...
# ...nor once this many chunks wait: two forward passes' worth, enough to batch well, while the model
# idles as we settle (at 256 a burst of writes waited ~0.2 s for its first batch: ~6 % of embedding
# 500 facts).
SETTLE_ENOUGH = 64
SETTLE_STEP_S = 0.05
# Rows read at once and ordered by length before they are cut into batches. A batch is padded to
# its longest text, so batches of texts of like length cost less: embedding 500 texts in the order
# they were written, 128 at a time, took ~30 % more CPU than the same texts in length order.
WINDOW = 1024
# Texts per forward pass of the model within a batch (the embedder pads each to its longest). Over the
# backfill's own length-ordered batches of 128 (500 benchmark facts, CPU time, three alternating runs):
# 9.35 / 8.94 / 8.78 ms per text at 32 against 9.69 / 9.25 / 9.40 at the embedder's default of 64.
MODEL_BATCH = 32


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
        size = WINDOW if limit is None else min(WINDOW, limit - done)
        rows = vault.read(partial(q.unembedded, limit=size, after_id=after)) if size > 0 else []
        if not rows:
            break
        after = rows[-1][0]
        for stored in _embed_rows(vault, embedder, by_length(rows, batch), embedder.model_id, embedded, cancel):
            done += stored
            if progress:
                progress(done, max(total, done))
    return done


def by_length(rows: list[tuple[int, str]], batch: int) -> list[list[tuple[int, str]]]:
    """``rows`` in batches of at most ``batch``, ordered by text length (longest first)."""
    ordered = sorted(rows, key=lambda row: -len(row[1]))
    return [ordered[i : i + batch] for i in range(0, len(ordered), batch)]


def reembed(vault: Vault, embedder: Embedder, *, batch: int = 128, progress: Progress | None = None,
            cancel: threading.Event | None = None,
            embedded: Callable[[list[int]], None] | None = None) -> int:
    """Replace every vector of another model by the current model's; returns how many were replaced.

    A no-op (one settings read) when the vault already records that all its vectors are of this
    model. Cancelled passes resume from the start at the next call (done rows are no longer stale)."""
    if not embedder.ready:
        return 0
    model = embedder.model_id
    if vault.read(lambda conn: get_setting(conn, VECTORS_MODEL_SETTING)) == model:
        return 0
    total = vault.read(partial(q.count_stale_embedded, model=model))
    if total:
        log.info("re-embedding %d vectors of another model with %s", total, model)
    done, after = 0, 0
    if progress and total:
        progress(0, total)
    while not (cancel and cancel.is_set()):
        rows = vault.read(partial(q.stale_embedded, model=model, limit=WINDOW, after_id=after))
        if not rows:
            vault.write(partial(_record_model, model=model))
            break
        after = rows[-1][0]
        for stored in _embed_rows(vault, embedder, by_length(rows, batch), model, embedded, cancel):
            done += stored
            if progress:
                progress(done, max(total, done))
    return done


def _embed_rows(vault: Vault, embedder: Embedder, batches: list[list[tuple[int, str]]], model: str,
                embedded: Callable[[list[int]], None] | None, cancel: threading.Event | None) -> Iterator[int]:
    """Embed each batch of ``(id, text)`` rows, store its vectors as ``model``'s and tell ``embedded``
    (on-write grouping); yields how many each batch stored. The model embeds the next batch while
    this thread stores the one before: it does not idle through the write and the grouping. A
    cancel stores nothing more: the batch handed over meanwhile is dropped (left for the next run)."""
    pending: tuple[list[int], Future[np.ndarray]] | None = None
    for rows in batches:
        if cancel and cancel.is_set():
            break
        handed = ([i for i, _ in rows], embedder.submit([text for _, text in rows], batch_size=MODEL_BATCH))
        if pending:
            yield _store(vault, *pending, model, embedded)
        pending = handed
    if pending and cancel and cancel.is_set():
        pending[1].cancel()  # unless the model has started on it, it never embeds it
    elif pending:
        yield _store(vault, *pending, model, embedded)


def _store(vault: Vault, ids: list[int], vectors: Future[np.ndarray], model: str,
           embedded: Callable[[list[int]], None] | None) -> int:
    items = list(zip(ids, vectors.result(), strict=True))
    vault.write(partial(set_embeddings, items=items, model=model))
    if embedded:
        embedded(ids)
    return len(ids)


def _record_model(conn: Any, change: Change, model: str) -> None:
    """All vectors are of ``model`` — checked again inside the write (another process may have
    written vectors of its own model since the pass read them)."""
    if q.count_stale_embedded(conn, model) == 0:
        set_setting(conn, change, VECTORS_MODEL_SETTING, model)


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

    def _settle(self) -> None:
        """Return once no write has woken us for ``SETTLE_S``, ``MAX_SETTLE_S`` after the first, or
        when ``SETTLE_ENOUGH`` chunks wait: the later ones are the next window, read when this one is
        embedded."""
        start = last = time.monotonic()
        while not self._stop:
            self._wake.clear()
            time.sleep(SETTLE_STEP_S)
            now = time.monotonic()
            if self._wake.is_set():
                last = now
            if (now - last >= SETTLE_S or now - start >= MAX_SETTLE_S
                    or self._vault.read(q.count_unembedded) >= SETTLE_ENOUGH):
                self._wake.clear()
                return

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait()
            # Facts written one at a time (a capture, a chat turn each) wake us once each: let a burst
            # settle so it is embedded in full batches of like length, not one model call per fact.
            self._settle()
            if self._stop:
                return
            self.idle.clear()
            self._cancel.clear()
            try:
                backfill(self._vault, self._embedder, progress=self._progress, cancel=self._cancel,
                         embedded=self._embedded)
                reembed(self._vault, self._embedder, progress=self._progress, cancel=self._cancel)
            except Exception:
                log.exception("embedding backfill failed; will retry on the next change")
            self.idle.set()
