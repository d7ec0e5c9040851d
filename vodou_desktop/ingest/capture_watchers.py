"""The capture watchers the tray app runs by itself (MCP-2): Claude Code sessions and the inbox.

Settings (the settings file's extra keys) say which run: ``capture_claude_code`` is True, False or
absent (never asked: nothing is watched until the person answers the first-run question), and
``capture_inbox`` (on unless turned off: the inbox is Vodou's own folder, filled only on purpose).
Each enabled watcher is its own ``SessionWatcher``; its state is one of ``STATES``. Pause stops
them; on resume, and when Claude Code capture is first turned on, what the session files already
hold is skipped, so nothing written while paused (or before the yes) is ever captured. Captures keep
the capture tier and the unanimity rule of ``ingest.window``.

The current states are also written to ``capture.json`` in the runtime folder, so the CLI and tests
can see what the running app watches.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vodou_desktop import config, paths
from vodou_desktop.ingest.distil import from_settings
from vodou_desktop.ingest.watch import SessionWatcher
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Vault

log = logging.getLogger(__name__)
CLAUDE_KEY, INBOX_KEY = "capture_claude_code", "capture_inbox"
CLAUDE_DIR_KEY, INBOX_DIR_KEY = "claude_projects_dir", "inbox_dir"
STATE_FILE = "capture.json"
WATCHING, PAUSED, MISSING, OFF, NOT_ASKED = "watching", "paused", "folder missing", "off", "not asked yet"
STATES = (WATCHING, PAUSED, MISSING, OFF, NOT_ASKED)
LABELS = {"claude_code": "Claude Code sessions", "inbox": "Inbox folder"}


@dataclass(frozen=True)
class WatcherState:
    name: str  # "claude_code" | "inbox"
    label: str
    folder: Path
    state: str
    note: str = ""  # how its windows were distilled, when a local model does it (never a silent fallback)

    def describe(self) -> str:
        return f"{self.label}: {self.state}" + (f" ({self.note})" if self.note else "")


def folders(settings: config.Settings) -> dict[str, Path]:
    extra = settings.extra
    return {"claude_code": Path(str(extra.get(CLAUDE_DIR_KEY) or "~/.claude/projects")).expanduser(),
            "inbox": Path(str(extra.get(INBOX_DIR_KEY) or paths.data_dir() / "inbox")).expanduser()}


def enabled(settings: config.Settings) -> dict[str, bool | None]:
    """True / False per watcher; None for Claude Code when the person was never asked."""
    claude = settings.extra.get(CLAUDE_KEY)
    return {"claude_code": claude if isinstance(claude, bool) else None,
            "inbox": settings.extra.get(INBOX_KEY, True) is not False}


def needs_first_run_question(settings: config.Settings) -> bool:
    return enabled(settings)["claude_code"] is None


def with_capture(settings: config.Settings, **choices: bool) -> config.Settings:
    """A copy of ``settings`` with ``claude_code=`` / ``inbox=`` choices stored."""
    keys = {"claude_code": CLAUDE_KEY, "inbox": INBOX_KEY}
    extra = dict(settings.extra)
    extra.update({keys[name]: bool(value) for name, value in choices.items()})
    return dataclasses.replace(settings, extra=extra)  # every other field kept as it is


class CaptureWatchers:
    """Start, pause, resume and reconfigure the app's watchers; ``states()`` for the tray and Settings."""

    def __init__(self, vault: Vault, settings: config.Settings, *, embedder: Embedder | None = None,
                 flush_after: float = 5.0, state_file: Path | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self.vault, self.settings, self.embedder, self.flush_after = vault, settings, embedder, flush_after
        self.paused = False
        self.state_file = state_file if state_file is not None else paths.runtime_dir() / STATE_FILE
        self.on_change = on_change
        self._running: dict[str, SessionWatcher] = {}
        self._last: list[WatcherState] = []
        self._lock = threading.RLock()  # the app calls these from worker threads (never the GUI thread)
        self._publishing = threading.Lock()  # one state file write at a time (a watcher's flush publishes too)

    # -- state -----------------------------------------------------------------------------
    def states(self) -> list[WatcherState]:
        out = []
        on = enabled(self.settings)
        for name, folder in folders(self.settings).items():
            if on[name] is None:
                state = NOT_ASKED
            elif not on[name]:
                state = OFF
            elif self.paused:
                state = PAUSED
            elif name in self._running:
                state = WATCHING
            else:
                state = MISSING
            watcher = dict(self._running).get(name)
            counts = getattr(watcher.distil, "counts", None) if watcher is not None else None
            out.append(WatcherState(name, LABELS[name], folder, state, counts.sentence() if counts else ""))
        return out

    def _publish(self) -> None:
        with self._publishing:
            self._publish_states()

    def _publish_states(self) -> None:
        states = self.states()
        if states == self._last:
            return
        self._last = states
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({s.name: {"state": s.state, "folder": str(s.folder), "note": s.note}
                                       for s in states}), encoding="utf-8")
            os.replace(tmp, self.state_file)
        except OSError as exc:
            log.warning("cannot write the capture state file %s: %s", self.state_file, exc)
        if self.on_change is not None:
            self.on_change()

    def _flushed(self) -> None:
        """A watcher flushed a window (in its own thread): what the model did with it may have changed (the
        note). Not under ``_lock``: ``stop`` holds it while it waits for that thread."""
        self._publish()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, paused: bool = False, skip_existing: bool = False) -> list[WatcherState]:
        with self._lock:
            self.paused = paused
            if not paused:
                self._start_enabled(skip_existing)
            self._publish()
            return self.states()

    def _start_enabled(self, skip_existing: bool) -> None:
        on, where = enabled(self.settings), folders(self.settings)
        for name in ("claude_code", "inbox"):
            if not on[name] or name in self._running:
                continue
            folder = where[name]
            if name == "inbox":
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # Vodou's own folder
            if not folder.is_dir():
                continue  # "folder missing" until it appears (``refresh``)
            watcher = SessionWatcher(self.vault, folder if name == "claude_code" else None,
                                     folder if name == "inbox" else None, flush_after=self.flush_after,
                                     embedder=self.embedder, distil=from_settings(self.settings),
                                     on_flush=self._flushed)
            if skip_existing and name == "claude_code":
                watcher.skip_to_end()
            self._running[name] = watcher.start(create=False)

    def set_paused(self, paused: bool) -> list[WatcherState]:
        with self._lock:
            if paused == self.paused:
                return self.states()
            self.paused = paused
            if paused:
                self._stop_all()
            else:
                self._start_enabled(skip_existing=True)
            self._publish()
            return self.states()

    def reconfigure(self, settings: config.Settings) -> list[WatcherState]:
        """New settings: stop what was turned off, start what was turned on (from now on)."""
        with self._lock:
            was_on = enabled(self.settings)
            self.settings = settings
            now_on = enabled(settings)
            for name in list(self._running):
                if not now_on[name] or folders(settings)[name] != self._folder_of(name):
                    self._running.pop(name).stop()
            if not self.paused:
                self._start_enabled(skip_existing=not was_on["claude_code"] and bool(now_on["claude_code"]))
            self._publish()
            return self.states()

    def refresh(self) -> list[WatcherState]:
        """Start a watcher whose folder appeared; mark one whose folder vanished as missing."""
        with self._lock:
            for name, watcher in list(self._running.items()):
                if not all(f.is_dir() for f in watcher.folders()):
                    self._running.pop(name).stop()
            if not self.paused:
                self._start_enabled(skip_existing=False)
            self._publish()
            return self.states()

    def _folder_of(self, name: str) -> Path | None:
        watcher = self._running.get(name)
        return watcher.folders()[0] if watcher else None

    def _stop_all(self) -> None:
        for name in list(self._running):
            self._running.pop(name).stop()

    def stop(self) -> None:
        with self._lock:
            self._stop_all()
            try:
                self.state_file.unlink()
            except FileNotFoundError:
                pass

    def as_json(self) -> dict[str, Any]:
        return {s.name: {"state": s.state, "folder": str(s.folder)} for s in self.states()}
