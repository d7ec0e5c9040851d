"""Vault and model work off the GUI thread, Anki-style: small ops with success/failure callbacks.

``Ops.run(work, on_success, on_failure)`` runs ``work()`` in a worker thread and calls the callback
on the GUI thread with its result. The GUI thread never waits on the vault or the model; views
refresh from ``VaultEvents.changed`` rather than from each other.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import shiboken6
from PySide6.QtCore import QObject, Signal

from vodou_desktop.errors import KnownError, from_sqlite
from vodou_desktop.ui.messages import MessageBridge
from vodou_desktop.vault import Change, Vault

log = logging.getLogger(__name__)
Success = Callable[[Any], None]
Failure = Callable[[BaseException], None]


@dataclass
class _Delivery:
    """What a finished op hands to the GUI thread. The GUI thread empties it (``take``), so every
    object the op held (the work, its callbacks, the widgets they reference, the result) is released
    there: a Qt object whose last reference dropped on a worker thread would be destroyed off the GUI
    thread, and Qt crashes on that."""

    owner: QObject | None
    callback: Callable[[Any], None] | None
    value: Any
    held: tuple[Any, ...] = ()  # the work and both callbacks, whichever one is called

    def take(self) -> tuple[QObject | None, Callable[[Any], None] | None, Any, tuple[Any, ...]]:
        out = (self.owner, self.callback, self.value, self.held)
        self.owner = self.callback = self.value = None
        self.held = ()
        return out


def freeze_startup_objects() -> int:
    """Take the objects made while starting (modules, classes, the windows: never garbage) out of
    Python's full garbage collections; returns how many.

    A full collection walks every tracked object while it holds the interpreter lock, so the GUI
    thread's next call into Python (a cell's text, while painting) waits for it: ~1 µs per object on
    the shared test machine, 190-270 ms for the ~250,000 objects of the browser over a 100,000-memory
    vault (bench/gui_stall.py, bench/history/rounds-1-4.md). Frozen objects are still freed by reference counting;
    only a reference cycle among them would stay (the young generations are collected first)."""
    gc.collect(1)
    gc.freeze()
    return gc.get_freeze_count()


def failure_words(exc: BaseException, vault_path: Path | None = None) -> str:
    """What a person reads when background work failed: a known error's own words; SQLite's errors
    (a damaged, locked or full vault) in the same words as the CLI's, never "btreeInitPage() returns
    error code 11"; anything else is our bug, logged with its traceback and said in one line."""
    if isinstance(exc, KnownError):
        return str(exc)
    if isinstance(exc, apsw.Error):
        known = from_sqlite(exc, vault_path or "this computer")
        if known is not None:
            return str(known)
    log.error("background work failed", exc_info=exc)
    return f"Something went wrong (a bug in Vodou): {type(exc).__name__}: {exc}"


class Ops(QObject):
    """Runs work in a small thread pool; delivers results by a queued signal to the GUI thread."""

    _finished = Signal(object)  # _Delivery

    def __init__(self, messages: MessageBridge, workers: int = 2, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.messages = messages
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vodou-ui-op")
        self._finished.connect(self._deliver)
        self.pending = 0
        self.closed = False
        self.vault_path: Path | None = None  # named in a storage error (Services.build sets it)

    def run(self, work: Callable[[], Any], on_success: Success | None = None, *,
            on_failure: Failure | None = None, owner: QObject | None = None) -> None:
        """Run ``work`` off the GUI thread; ``on_success(result)`` or ``on_failure(exc)`` back on it.

        A ``KnownError`` with no ``on_failure`` goes to the message bridge (the person sees it); any
        other exception is our bug and is logged with its traceback and shown as such.
        After ``shutdown`` (the app is quitting) new work is dropped: nobody would see its result.
        """
        if self.closed:
            log.debug("dropping work submitted after shutdown: %r", work)
            return
        self.pending += 1
        # The job keeps its references in a list it empties, then hands them over in the delivery:
        # no reference to the work or its callbacks stays with the worker thread (see _Delivery).
        held: list[Any] = [work, on_success, on_failure, owner]

        def job() -> None:
            todo, ok, failed, who = held
            held.clear()
            try:
                delivery = _Delivery(who, ok, todo(), (todo, ok, failed))
            except BaseException as exc:  # delivered to the GUI thread, never swallowed
                delivery = _Delivery(who, failed or self.report, exc, (todo, ok, failed))
            del todo, ok, failed, who
            self._finished.emit(delivery)
            del delivery  # the worker's last hold on it; its contents are the GUI thread's to release

        self._pool.submit(job)

    def _deliver(self, delivery: _Delivery) -> None:
        self.pending -= 1
        owner, callback, value, _held = delivery.take()
        if owner is not None and not shiboken6.isValid(owner):
            return  # the widget that asked is gone
        if callback is not None:
            callback(value)

    def report(self, exc: BaseException) -> None:
        self.messages.error(failure_words(exc, self.vault_path))

    def shutdown(self) -> None:
        """Wait for running ops (at quit, after the event loop stopped)."""
        self.closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)


class VaultEvents(QObject):
    """The vault's change events, re-emitted on the GUI thread (the vault emits on its writer)."""

    changed = Signal(object)  # Change

    def __init__(self, vault: Vault, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe = vault.subscribe(self._from_writer)

    def _from_writer(self, change: Change) -> None:
        if shiboken6.isValid(self):
            self.changed.emit(change)  # queued: this object lives in the GUI thread

    def close(self) -> None:
        self._unsubscribe()
