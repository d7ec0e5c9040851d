"""Watched sessions (ING-5): Claude Code session logs and an inbox folder, at tier ``capture``.

- Claude Code writes one JSON object per line to ``<projects dir>/<encoded cwd>/<session>.jsonl``.
  The person's prompts (``type: user``) are buffered as capture entries; the project comes from
  the ``projects`` mapping (the longest project folder containing the line's ``cwd``).
- ``.txt``/``.md`` files dropped in the inbox become one window each (kind ``inbox``), once per
  content hash.

Robustness: a file's read offset (and inode) is persisted in ``ingest_seen`` in the SAME
transaction as the entries read up to it, so a crash or restart never re-ingests and never skips.
Only complete lines are consumed (a partial last line waits for its newline); a file that shrank
or changed inode was rotated and is read from the start; a deleted file drops its offset. File
events only mark paths dirty; a single loop processes them, so a burst of events is one read.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import apsw
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.settle import settle_new_facts
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault.facts import content_hash
from vodou_desktop.vault.projects_store import all_projects

log = logging.getLogger(__name__)
INBOX_SUFFIXES = (".txt", ".md")
SETTLE_S = 0.3  # an inbox file must be unchanged this long before it is read
MAX_INBOX_BYTES = 1_000_000


@dataclass
class WatchStats:
    entries: int = 0
    inbox_files: int = 0
    flushes: int = 0
    facts: int = 0


def project_for(cwd: str | None, mapping: Iterable[tuple[str, str | None]]) -> str | None:
    """The project whose folder is the longest prefix of ``cwd`` (None when no folder contains it)."""
    if not cwd:
        return None
    best: tuple[int, str | None] = (-1, None)
    target = Path(cwd).expanduser()
    for name, folder in mapping:
        if not folder:
            continue
        root = Path(folder).expanduser()
        if (target == root or root in target.parents) and len(root.parts) > best[0]:
            best = (len(root.parts), name)
    return best[1]


def prompt_text(obj: dict[str, Any]) -> str | None:
    """The person's typed prompt in one Claude Code log line, or None (tool results, assistant, meta)."""
    if obj.get("type") != "user" or obj.get("isMeta"):
        return None
    message = obj.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str)).strip() or None
    return None


class SessionWatcher:
    """Watches the Claude Code folder and the inbox; either may be None (the app runs one of each)."""

    def __init__(self, vault: Vault, claude_dir: Path | None, inbox_dir: Path | None, *, flush_after: float = 5.0,
                 poll: float = 0.2, embedder: Embedder | None = None, distil: w.Distil | None = None,
                 on_flush: Callable[[], None] | None = None) -> None:
        self.vault = vault
        self.distil = distil  # a local model for the flushes (``ingest.distil``); None: the rules
        self.on_flush = on_flush
        self.claude_dir = Path(claude_dir) if claude_dir is not None else None
        self.inbox_dir = Path(inbox_dir) if inbox_dir is not None else None
        self.embedder = embedder
        self.flush_after, self.poll = flush_after, poll
        self.stats = WatchStats()
        self._dirty: set[Path] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_entry = 0.0
        self._observer: Any = None
        self._thread = threading.Thread(target=self._run, name="vodou-capture-watch", daemon=True)

    # -- lifecycle ---------------------------------------------------------------------------
    def folders(self) -> list[Path]:
        return [f for f in (self.claude_dir, self.inbox_dir) if f is not None]

    def start(self, create: bool = True) -> SessionWatcher:
        """Watch; missing folders are created unless ``create`` is False (then they must exist)."""
        for folder in self.folders():
            if create:
                folder.mkdir(parents=True, exist_ok=True)
        self._observer = Observer()
        handler = _Dirty(self._mark)
        for folder in self.folders():
            self._observer.schedule(handler, str(folder), recursive=True)
        self._observer.start()
        self._mark_all()  # what was appended while nobody watched
        self._thread.start()
        return self

    def stop(self) -> WatchStats:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        self._thread.join(timeout=30)
        self.process_dirty()
        self.flush()
        return self.stats

    def _mark(self, path: Path) -> None:
        with self._lock:
            self._dirty.add(path)

    def _mark_all(self) -> None:
        sessions = list(self.claude_dir.rglob("*.jsonl")) if self.claude_dir else []
        for path in sessions + (list(self.inbox_dir.rglob("*")) if self.inbox_dir else []):
            self._mark(path)

    def skip_to_end(self) -> int:
        """Treat everything already in the session files as read (call before ``start``): what was
        written while capture was paused, or before the person agreed to it, is never captured."""
        if self.claude_dir is None or not self.claude_dir.is_dir():
            return 0
        seen: list[tuple[str, str]] = []
        for path in self.claude_dir.rglob("*.jsonl"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            seen.append((f"watch:{path}", json.dumps({"offset": st.st_size, "inode": st.st_ino})))

        def job(conn: apsw.Connection, change: Change) -> None:
            for key, value in seen:
                store.mark_seen(conn, change, key, value)

        self.vault.write(job)
        return len(seen)

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            try:
                self.process_dirty()
                if self._last_entry and time.monotonic() - self._last_entry >= self.flush_after:
                    self.flush()
            except Exception:  # the watcher must survive one bad file; the error is logged loudly
                log.exception("capture watcher failed on this round; retrying")

    # -- work --------------------------------------------------------------------------------
    def flush(self) -> None:
        report = w.flush(self.vault, distil=self.distil)
        self._last_entry = 0.0
        if report.entries:
            self.stats.flushes += 1
            self.stats.facts += len(report.fact_ids)
            settle_new_facts(self.vault, report.distilled_ids, self.embedder)
            if self.on_flush is not None:
                self.on_flush()

    def process_dirty(self) -> None:
        with self._lock:
            paths, self._dirty = self._dirty, set()
        for path in sorted(paths):
            if not self._process(path):
                self._mark(path)  # not settled yet: look again next round

    def _process(self, path: Path) -> bool:
        if path.suffix == ".jsonl" and self.claude_dir is not None and self.claude_dir in path.parents:
            self._read_session(path)
        elif path.suffix in INBOX_SUFFIXES and self.inbox_dir is not None and self.inbox_dir in path.parents:
            return self._read_inbox(path)
        return True

    def _read_session(self, path: Path) -> None:
        key = f"watch:{path}"
        try:
            st = path.stat()
        except FileNotFoundError:
            self.vault.write(partial(store.forget_seen, key=key))
            return
        saved = json.loads(self.vault.read(partial(store.seen_value, key=key)) or "{}")
        offset = int(saved.get("offset", 0))
        if saved.get("inode") != st.st_ino or st.st_size < offset:
            offset = 0  # rotated (new inode) or truncated: read the new file from its start
        if st.st_size <= offset:
            return
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(st.st_size - offset)
        end = data.rfind(b"\n") + 1
        if end == 0:
            return  # only a partial line so far
        mapping = self.vault.read(all_projects)
        entries = [e for i, line in enumerate(data[:end].splitlines())
                   if (e := self._entry(line, path, offset, i, mapping)) is not None]
        new_offset = json.dumps({"offset": offset + end, "inode": st.st_ino})
        w.enqueue(self.vault, entries, extra=lambda conn, change: store.mark_seen(conn, change, key, new_offset))
        if entries:
            self.stats.entries += len(entries)
            self._last_entry = time.monotonic()

    def _entry(self, line: bytes, path: Path, offset: int, index: int,
               mapping: list[tuple[str, str | None]]) -> w.Entry | None:
        try:
            obj = json.loads(line)
        except ValueError:
            log.warning("skipping a line of %s that is not JSON", path.name)
            return None
        text = prompt_text(obj) if isinstance(obj, dict) else None
        if not text:
            return None
        entry_id = str(obj.get("uuid") or f"{path.name}:{offset}:{index}")
        event_at = obj.get("timestamp") or w.now_iso()
        return w.Entry(text[: w.MAX_ENTRY_CHARS], "claude-code", project_for(obj.get("cwd"), mapping),
                       None, str(event_at).replace("Z", "+00:00"), entry_id)

    def _read_inbox(self, path: Path) -> bool:
        try:
            st = path.stat()
        except FileNotFoundError:
            return True
        if time.time() - st.st_mtime < SETTLE_S:
            return False
        if st.st_size > MAX_INBOX_BYTES:
            log.warning("inbox file %s is larger than %d bytes; skipped", path.name, MAX_INBOX_BYTES)
            return True
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():
            return True
        key = f"inbox:{content_hash(text)}"
        project = project_for(str(path.parent), self.vault.read(all_projects))
        entry = w.normalise_entry(w.Entry(text[: w.MAX_ENTRY_CHARS], "inbox", project, None,
                                          entry_id=f"{path.name}:{content_hash(text)[:16]}"))

        def job(conn: apsw.Connection, change: Change) -> list[int] | None:
            if store.seen_value(conn, key) is not None:
                return None  # this content was ingested before (an editor's second save, a restart)
            report = w.store_window(conn, change, [entry], kind="inbox", tier="capture", title=path.name,
                                    keep_turns=False)
            store.mark_seen(conn, change, key, path.name)
            return report.distilled_ids

        fact_ids = self.vault.write(job)
        if fact_ids is not None:
            self.stats.inbox_files += 1
            self.stats.facts += len(fact_ids)
            settle_new_facts(self.vault, fact_ids, self.embedder)
        return True


class _Dirty(FileSystemEventHandler):
    def __init__(self, mark: Any) -> None:
        self._mark = mark

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        for attr in ("src_path", "dest_path"):
            raw = getattr(event, attr, None)
            if raw:
                self._mark(Path(os.fsdecode(raw)))
