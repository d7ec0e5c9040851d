"""Sync in the background of a long-running process (the tray app, ``vodou serve``): its own thread.

A run is requested when a file arrives in the folder (watchdog), when this vault commits a change to
something that syncs, and every ``poll_s`` seconds (an engine that writes without file events, a USB
stick plugged back). Requests that come while a run is going fold into one more run after it. Nothing
here runs on the caller's thread, so the GUI thread and searches never wait for sync.

The state is one of ``off`` (not set up), ``paused``, ``syncing``, ``synced`` or ``problem`` with a
sentence; ``on_state`` is called from the sync thread on every change of it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from vodou_desktop.errors import KnownError
from vodou_desktop.sync.engine import RunReport, SyncEngine
from vodou_desktop.vault import Change, Vault
from vodou_desktop.words import plural

log = logging.getLogger(__name__)
SYNCED_TABLES = frozenset({"chunks", "operations", "site_rules", "operator_memory", "*"})
POLL_S = 60.0
SETTLE_S = 0.1  # a burst of arriving files becomes one run


@dataclass(frozen=True)
class SyncState:
    state: str  # off, paused, syncing, synced, problem
    detail: str = ""

    def words(self) -> str:
        head = {"off": "Sync: off", "paused": "Sync: paused", "syncing": "Sync: syncing…", "synced": "Sync: synced",
                "problem": "Sync: problem"}[self.state]
        return f"{head} — {self.detail}" if self.detail else head


class _FolderEvents(FileSystemEventHandler):
    def __init__(self, wake: Callable[[], None], own: str) -> None:
        self.wake = wake
        self.own = own

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = str(event.dest_path or event.src_path) if hasattr(event, "dest_path") else str(event.src_path)
        name = Path(path).name
        if name.startswith(".") or f"/{self.own}/" in path or path.endswith(f"/{self.own}"):
            return  # temporary files, and this device's own writes
        self.wake()


class BackgroundSync:
    def __init__(self, vault: Vault, on_state: Callable[[SyncState], None] | None = None, *,
                 poll_s: float = POLL_S, on_report: Callable[[RunReport], None] | None = None) -> None:
        self.vault = vault
        self.engine = SyncEngine(vault)
        self.on_state = on_state
        self.on_report = on_report
        self.poll_s = poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._unsubscribe: Callable[[], None] | None = None
        self.state = SyncState("off")

    def start(self) -> bool:
        """Start when this vault syncs; False (and state ``off``) when it does not."""
        cfg = self.engine.config()
        if cfg is None:
            self._set(SyncState("off", "not set up"))
            return False
        self._unsubscribe = self.vault.subscribe(self._vault_changed)
        if cfg.folder.is_dir():
            observer = Observer()
            observer.schedule(_FolderEvents(self.request, cfg.device), str(cfg.folder), recursive=True)
            observer.daemon = True
            observer.start()
            self._observer = observer
        self._thread = threading.Thread(target=self._loop, name="vodou-sync", daemon=True)
        self._thread.start()
        self.request()
        return True

    def request(self) -> None:
        """Ask for a run soon (never waits)."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._observer is not None:
            self._observer.stop()  # type: ignore[attr-defined]
            self._observer.join(timeout)  # type: ignore[attr-defined]
        if self._thread is not None:
            self._thread.join(timeout)

    def _vault_changed(self, change: Change) -> None:
        if change.tables & SYNCED_TABLES:
            self.request()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll_s)
            if self._stop.is_set():
                return
            self._stop.wait(SETTLE_S)
            self._wake.clear()
            self._run_once()

    def _run_once(self) -> None:
        try:
            if self.engine.config() is None:
                self._set(SyncState("off", "not set up"))
                return
            if self.engine.paused():
                self._set(SyncState("paused", "changes are kept and sent when you resume"))
                return
            self._set(SyncState("syncing"))
            report = self.engine.run()
        except KnownError as exc:
            self._set(SyncState("problem", str(exc)))
            return
        except Exception as exc:  # a bug: said in the tray, logged with its traceback, the thread goes on
            log.exception("sync run failed")
            self._set(SyncState("problem", f"sync failed: {exc}"))
            return
        if self.on_report is not None:
            self.on_report(report)
        problems = report.refused + report.warnings
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            self._set(SyncState("problem", problems[0] + more))
        elif report.waiting:
            self._set(SyncState("syncing", f"waiting for {plural(sum(report.waiting.values()), 'file')} to arrive"))
        else:
            self._set(SyncState("synced"))

    def _set(self, state: SyncState) -> None:
        if state == self.state:
            return
        self.state = state
        if self.on_state is not None:
            try:
                self.on_state(state)
            except Exception:
                log.exception("sync state listener failed")
