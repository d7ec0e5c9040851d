"""Long work (UI-5): backfill, re-embedding, imports and scans, with progress and cancel.

A ``LongJob`` runs ``work(progress, cancel)`` in its own thread; progress arrives on the GUI
thread by signal, and Cancel sets an event the work checks between batches. The GUI thread only
ever receives signals, so the window keeps painting however long the work takes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QProgressDialog, QWidget

from vodou_desktop.errors import KnownError, from_sqlite
from vodou_desktop.ingest.dedupe import DedupeReport, dedupe_scan
from vodou_desktop.search.backfill import backfill, reembed
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Vault

log = logging.getLogger(__name__)
EMBEDDING = "Embedding memories for search by meaning"
DUPLICATES = "Finding near-duplicate memories"
DONE_SHOWN_MS = 4000  # how long "… done" stays in the status bar
Progress = Callable[[int, int], None]
Work = Callable[[Progress, threading.Event], Any]


class LongJob(QObject):
    """A started job keeps itself alive (``_running``) until its end has reached the GUI thread and
    its thread has returned, so its last reference is always dropped on the GUI thread: a QObject
    freed on a worker thread is destroyed there, and Qt crashes on that."""

    progressed = Signal(int, int)  # done, total
    finished = Signal(object)  # the work's result, also after a cancel (what was done so far)
    failed = Signal(str)
    _ended = Signal()
    _running: set[LongJob] = set()

    def __init__(self, title: str, work: Work, parent: QObject | None = None, *,
                 vault_path: Path | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.vault_path = vault_path  # named if the work fails on the vault's storage
        self._work = work
        self.cancel_event = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"vodou-job-{title}", daemon=True)
        self.done = threading.Event()
        self._ended.connect(self._release)

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def start(self) -> LongJob:
        LongJob._running.add(self)
        self._thread.start()
        return self

    def _release(self) -> None:
        """On the GUI thread, after the last signal: the thread has only to return (no wait to
        speak of), and once it has, nothing but the GUI thread holds this job."""
        self._thread.join(timeout=5)
        LongJob._running.discard(self)

    def cancel(self) -> None:
        self.cancel_event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """For shutdown and tests only: never call this on the GUI thread while work runs."""
        return self.done.wait(timeout)

    def _run(self) -> None:
        try:
            result = self._work(lambda done, total: self.progressed.emit(done, total), self.cancel_event)
        except KnownError as exc:
            self.failed.emit(str(exc))
        except apsw.Error as exc:  # a damaged, locked or full vault, in words (never SQLite's own)
            known = from_sqlite(exc, self.vault_path or "this computer")
            if known is None:
                log.exception("%s failed", self.title)
            self.failed.emit(f"{self.title} stopped: {known}" if known is not None else
                             f"{self.title} failed (a bug in Vodou): {type(exc).__name__}: {exc}")
        except Exception as exc:  # our bug: logged with its traceback, summarised for the person
            log.exception("%s failed", self.title)
            self.failed.emit(f"{self.title} failed (a bug in Vodou): {type(exc).__name__}: {exc}")
        else:
            self.finished.emit(result)
        finally:
            self.done.set()
            self._ended.emit()


def backfill_job(vault: Vault, embedder: Embedder, parent: QObject | None = None) -> LongJob:
    """Embed every chunk that has no embedding yet (after import, or after the model was off), then
    re-embed any vector of another model (after a model change)."""
    if not embedder.ready:
        raise KnownError("The embedding model is not ready yet (or is off); try again when it is.")

    def work(progress: Progress, cancel: threading.Event) -> int:
        done = backfill(vault, embedder, progress=progress, cancel=cancel)
        return done + reembed(vault, embedder, progress=progress, cancel=cancel)

    return LongJob("Embedding memories", work, parent, vault_path=vault.path)


class JobProgressDialog(QProgressDialog):
    """A non-modal progress dialog bound to one job: Cancel cancels it; it closes when it ends."""

    def __init__(self, job: LongJob, parent: QWidget | None = None) -> None:
        super().__init__(job.title, "Cancel", 0, 0, parent)
        self.setWindowTitle(job.title)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumDuration(0)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.job = job
        job.progressed.connect(self._progress)
        job.finished.connect(self._ended)
        job.failed.connect(self._ended)
        self.canceled.connect(job.cancel)

    def _progress(self, done: int, total: int) -> None:
        self.setMaximum(max(total, 1))
        self.setValue(min(done, max(total, 1)))
        self.setLabelText(f"{self.job.title}: {done:,} of {total:,}")

    def _ended(self, _result: object) -> None:
        self.close()


class WorkProgress(QObject):
    """Progress of work on other threads, on the GUI thread: ``report`` may be called from any thread
    (the signal is queued to the GUI thread), so the work never waits for the window."""

    progressed = Signal(str, int, int)  # what, done, total

    def report(self, what: str, done: int, total: int) -> None:
        self.progressed.emit(what, done, total)


class WorkIndicator(QWidget):
    """The status bar's line for work in the background: "Embedding memories…: 1,200 of 5,000" and a
    bar; "… done" for a few seconds at the end, then nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setAccessibleName("Work in the background")
        self.bar = QProgressBar(maximumWidth=120, textVisible=True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self._hide_later = QTimer(self, singleShot=True, interval=DONE_SHOWN_MS)
        self._hide_later.timeout.connect(self.hide)
        self.hide()

    def show_progress(self, what: str, done: int, total: int) -> None:
        if total <= 0:  # nothing to do this time: say nothing
            return
        self._hide_later.stop()
        self.bar.setRange(0, total)
        self.bar.setValue(min(done, total))
        if done >= total:
            self.label.setText(f"{what}: done ({total:,})")
            self._hide_later.start()
        else:
            self.label.setText(f"{what}: {done:,} of {total:,}")
        self.show()


def duplicates_job(vault: Vault, embedder: Embedder, work: WorkProgress, parent: QObject | None = None) -> LongJob:
    """Rebuild every group of near-duplicates (``vodou mem dedupe``): memories still waiting for their
    vector are embedded first, then every memory is compared; both report to the status bar."""
    if not embedder.ready:
        raise KnownError("Search by meaning is not ready yet (or is off): near-duplicates are found by meaning; "
                         "try again when it is.")

    def run(_progress: Progress, cancel: threading.Event) -> DedupeReport:
        backfill(vault, embedder, progress=lambda d, t: work.report(EMBEDDING, d, t), cancel=cancel)
        return dedupe_scan(vault, embedder, progress=lambda d, t: work.report(DUPLICATES, d, t), cancel=cancel)

    return LongJob(DUPLICATES, run, parent, vault_path=vault.path)
