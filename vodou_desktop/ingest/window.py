"""The capture buffer and its flush windows (ING-1, VAULT-5; seed 004).

Prompts from terminals and IDEs are buffered as entries (text, tool, project or none, scope,
event time). A flush takes every pending entry as one window, extracts bullets from the whole
window, and stores them as facts of one batch: one source row carrying the batch id, one
``source_events`` row per entry — so the label each fact received can be audited later.

The project rule is unanimity, not dominance: a window's facts get a project only when EVERY
entry carries the same one. One untagged entry or a second project and the facts stay global
(NULL). Under the hard project wall a wrong tag hides a memory everywhere else, which is worse
than no tag. Scope keeps the dominance rule because scope is only a search boost.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.extract import Bullet, extract_bullets
from vodou_desktop.ingest.fences import strip_context
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault.clock import now_iso, parse_iso, to_iso
from vodou_desktop.vault.facts import clean_project, content_hash, insert_fact
from vodou_desktop.vault.secret_filter import scrub
from vodou_desktop.vault.sources import stamp_source

Extractor = Callable[[str], list[Bullet]]
MAX_ENTRY_CHARS = 100_000


@dataclass(frozen=True)
class Entry:
    text: str
    tool: str
    project: str | None = None
    scope: str | None = None
    event_at: str = field(default_factory=now_iso)
    entry_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class WindowLabel:
    project: str | None
    scope: str | None
    tool: str


@dataclass
class FlushReport:
    batch_id: str | None = None
    entries: int = 0
    fact_ids: list[int] = field(default_factory=list)
    label: WindowLabel | None = None
    secrets_removed: list[str] = field(default_factory=list)  # kinds, one per secret (vault/secret_filter.py)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["facts"] = len(self.fact_ids)
        return data


def window_project(projects: Sequence[str | None]) -> str | None:
    """Unanimity: the one project every entry carries, else ``None`` (global)."""
    distinct = set(projects)
    if len(distinct) == 1:
        return next(iter(distinct))
    return None


def window_scope(scopes: Sequence[str | None]) -> str | None:
    """Dominance: the most common scope among entries that have one (first seen wins a tie)."""
    counts = Counter(s for s in scopes if s)
    return counts.most_common(1)[0][0] if counts else None


def window_label(entries: Sequence[Entry]) -> WindowLabel:
    tools = sorted({e.tool for e in entries})
    return WindowLabel(window_project([e.project for e in entries]), window_scope([e.scope for e in entries]),
                       tools[0] if len(tools) == 1 else ",".join(tools))


def normalise_entry(entry: Entry) -> Entry:
    """Validate an entry and strip page context before it is ever written (PAGE-1)."""
    text = strip_context(entry.text or "")
    if not text:
        raise InvalidInput("the capture entry is empty")
    if len(text) > MAX_ENTRY_CHARS:
        raise InvalidInput(f"the capture entry is too long ({len(text)} characters; limit {MAX_ENTRY_CHARS})")
    if not entry.tool or not entry.tool.strip():
        raise InvalidInput("a capture entry needs the name of the tool it came from")
    try:
        event_at = to_iso(parse_iso(entry.event_at))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"bad event time {entry.event_at!r}: use ISO 8601") from exc
    return Entry(text, entry.tool.strip(), clean_project(entry.project), entry.scope or None, event_at,
                 entry.entry_id)


def enqueue(vault: Vault, entries: Sequence[Entry], extra: Callable[[apsw.Connection, Change], None] | None = None
            ) -> list[str]:
    """Buffer entries (one transaction, with ``extra`` — e.g. a watcher's file offset)."""
    clean = [normalise_entry(e) for e in entries]

    def job(conn: apsw.Connection, change: Change) -> None:
        for e in clean:
            store.buffer_entry(conn, change, e.entry_id, _fields(e))
        if extra is not None:
            extra(conn, change)

    vault.write(job)
    return [e.entry_id for e in clean]


def _fields(e: Entry) -> dict[str, Any]:
    return {"text": e.text, "tool": e.tool, "project": e.project, "scope": e.scope, "event_at": e.event_at or None}


def flush(vault: Vault, *, extractor: Extractor = extract_bullets, kind: str = "capture",
          tier: str = "capture") -> FlushReport:
    """Turn every buffered entry into facts of one batch, atomically (buffer read inside the write)."""

    def job(conn: apsw.Connection, change: Change) -> FlushReport:
        pending = store.buffered_entries(conn)
        entries = [Entry(f["text"], f["tool"], f.get("project"), f.get("scope"), f["event_at"], entry_id)
                   for entry_id, f in pending]
        report = store_window(conn, change, entries, extractor=extractor, kind=kind, tier=tier)
        store.drop_buffered(conn, change, [e.entry_id for e in entries])
        return report

    result: FlushReport = vault.write(job)
    return result


def store_window(conn: apsw.Connection, change: Change, entries: Sequence[Entry], *,
                 extractor: Extractor = extract_bullets, kind: str = "capture", tier: str = "capture",
                 title: str | None = None, url: str | None = None) -> FlushReport:
    """Inside a write job: record the window's inputs and store its facts under one batch id."""
    if not entries:
        return FlushReport()
    label = window_label(entries)
    batch_id = f"{kind}-{uuid.uuid4().hex}"
    store.record_events(conn, change, batch_id, [{"entry_id": e.entry_id, **_fields(e)} for e in entries])
    # DATA-8, before extraction: a key split into several bullets would leave its lines unrecognised
    entries = [replace(e, text=scrub(conn, change, e.text, kind)) for e in entries]
    bullets = _window_bullets(entries, extractor)
    report = FlushReport(batch_id, len(entries), [], label, change.secrets_removed)
    if not bullets:
        return report
    source_id = stamp_source(conn, change, kind=kind, tier=tier, url=url, title=title, tool=label.tool,
                             batch_id=batch_id)
    thread: int | None = None  # one window (a conversation, a flush) is one thread, in order
    for seq, (bullet, entry) in enumerate(bullets):
        fact_id = insert_fact(
            conn, change, text=bullet.text, source_id=source_id, kind=bullet.kind, project=label.project,
            scope=label.scope, valid_at=entry.event_at or None, valid_precision="instant" if entry.event_at else None,
            thread_id=thread, thread_seq=None if thread is None else seq, infer_thread=False)
        thread = fact_id if thread is None else thread
        report.fact_ids.append(fact_id)
    return report


def _window_bullets(entries: Sequence[Entry], extractor: Extractor) -> list[tuple[Bullet, Entry]]:
    seen: set[str] = set()
    out: list[tuple[Bullet, Entry]] = []
    for entry in entries:
        for bullet in extractor(strip_context(entry.text)):
            key = content_hash(bullet.text)
            if key not in seen:
                seen.add(key)
                out.append((bullet, entry))
    return out


def capture_conversation(vault: Vault, turns: Sequence[Entry], *, project: str | None, conversation_id: str,
                         tool: str = "panel", kind: str = "turn", tier: str = "first_party",
                         url: str | None = None, title: str | None = None,
                         extractor: Extractor = extract_bullets) -> FlushReport:
    """Web/panel turns: one conversation is one window with one project (nothing to mix).

    Every turn is stamped with the conversation's project before the window is labelled, so the
    unanimity rule gives exactly that project; turns of other conversations never share the batch.
    """
    clean = [normalise_entry(Entry(t.text, tool, project, t.scope, t.event_at, f"{conversation_id}:{t.entry_id}"))
             for t in turns]

    def job(conn: apsw.Connection, change: Change) -> FlushReport:
        return store_window(conn, change, clean, extractor=extractor, kind=kind, tier=tier, url=url, title=title)

    result: FlushReport = vault.write(job)
    return result


def pending_count(vault: Vault) -> int:
    return len(vault.read(store.buffered_entries))
