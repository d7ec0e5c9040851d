"""Importing ChatGPT and Claude exports into the vault (ING-5, seed 004).

- Each message's own timestamp becomes the fact's ``valid_at`` (precision ``instant``);
  ``created_at`` stays the import time, so an import of old history never looks newer than it is.
- Tier ``import``. Each of the person's messages is kept whole as a conversation memory and the
  durable statements in it are distilled beside it (``ingest.window``); an assistant's reply is kept
  only as the one decision it carries when the person's next message accepts it (``ingest.accepted``).
  Every memory names the message it came from (``source_event_id``).
- ``project``: every message is stamped with it, so the window's unanimity gives the conversation
  that project (preferences stay global, as everywhere).
- ``distil``: a local model (``ingest.distil``), called before the write transaction (the writer never
  waits on it), with the rules for any window it fails on.
- One write transaction per conversation: a conversation lands whole or not at all. A malformed
  conversation is reported and nothing from it is stored; the others still import.
- Idempotent: every imported message is recorded in ``ingest_seen`` under a content hash of
  (format, conversation, message, text) in the same transaction, so a re-import adds nothing and
  a later export of a longer conversation adds only its new messages.
- Each conversation is one batch: its messages are recorded as ``source_events`` (with their role).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.ingest.accepted import accepted_bullet, accepts
from vodou_desktop.ingest.distil import DistilCounts, ModelDistiller
from vodou_desktop.ingest.exports import (
    MAX_EXPORT_BYTES,
    Conversation,
    MalformedConversation,
    check_format,
    conversations,
    guess_format,
    load_export,
)
from vodou_desktop.ingest.extract import Bullet
from vodou_desktop.ingest.window import Entry, store_window
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault import journal_store as journal
from vodou_desktop.vault.facts import clean_project

Progress = Callable[[int, int], None]


@dataclass
class ImportReport:
    format: str
    conversations: int = 0
    imported: int = 0  # conversations that added at least one message
    messages: int = 0  # new messages of the person recorded
    facts: int = 0  # every memory written: the person's messages kept whole, and what was distilled
    conversation_memories: int = 0
    distilled: int = 0
    accepted: int = 0  # of the distilled: decisions kept from assistant replies the person accepted
    project: str | None = None
    malformed: list[str] = field(default_factory=list)
    fact_ids: list[int] = field(default_factory=list)
    secrets_removed: list[str] = field(default_factory=list)  # kinds, one per secret (vault/secret_filter.py)
    op: str | None = None  # the undo journal's entry for the whole import (None: it added nothing)
    distilled_ids: list[int] = field(default_factory=list)
    model: DistilCounts | None = None  # how the windows were distilled, when a model was asked

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("fact_ids")
        data.pop("distilled_ids")
        data["model"] = self.model.as_json() if self.model is not None else None
        return data


def message_key(fmt: str, conv: Conversation, msg_id: str, text: str) -> str:
    digest = hashlib.sha256("\x1f".join((fmt, conv.id, msg_id, text)).encode()).hexdigest()
    return f"import:{fmt}:{digest}"


AUTO = "auto"  # guess the format from the file (the desktop's Import…)


def import_export(vault: Vault, path: Path, fmt: str, *, progress: Progress | None = None,
                  cancel: threading.Event | None = None, max_bytes: int = MAX_EXPORT_BYTES,
                  project: str | None = None, distil: ModelDistiller | None = None) -> ImportReport:
    """Import one export file; file-level problems raise ``InvalidInput`` before any write."""
    project = clean_project(project)
    data = load_export(Path(path), max_bytes)
    if fmt == AUTO:
        fmt = guess_format(data) or _unknown_format(path)
    check_format(data, fmt, path)
    report = ImportReport(fmt, conversations=len(data), project=project)
    before = DistilCounts()
    if distil is not None:
        before.add(distil.counts)
    for done, item in enumerate(conversations(data, fmt), start=1):
        if cancel is not None and cancel.is_set():
            break
        if isinstance(item, MalformedConversation):
            report.malformed.append(str(item))
        else:
            _import_conversation(vault, item, fmt, report, project, distil)
        if progress:
            progress(done, report.conversations)
    if distil is not None:
        report.model = _since(distil.counts, before)
    # one undo for the whole import (each conversation was its own transaction)
    report.op = vault.write(lambda c, ch: journal.record_import(c, ch, report.fact_ids, f"{Path(path).name} ({fmt})"))
    return report


def _since(now: DistilCounts, before: DistilCounts) -> DistilCounts:
    return DistilCounts(now.windows - before.windows, now.by_model - before.by_model, now.fell_back - before.fell_back,
                        now.reasons - before.reasons, now.dropped_questions - before.dropped_questions)


def _unknown_format(path: Path) -> str:
    raise InvalidInput(f"{path} is neither a ChatGPT nor a Claude conversations export")


def conversation_entries(conv: Conversation, fmt: str, project: str | None, fresh: set[str]
                         ) -> tuple[list[Entry], dict[str, list[Bullet]]]:
    """The window of one conversation: the person's messages not imported before (their ids in
    ``fresh``), each preceded by the assistant reply it accepts, if it accepts one, with what is kept
    of that reply."""
    entries: list[Entry] = []
    accepted: dict[str, list[Bullet]] = {}
    previous = None
    for m in conv.messages:
        if m.role == "user" and m.id in fresh:
            if previous is not None and previous.role == "assistant" and accepts(m.text):
                kept = accepted_bullet(previous.text)
                if kept is not None:
                    entries.append(Entry(previous.text, fmt, project, None, previous.at or "", previous.id,
                                         "assistant"))
                    accepted[previous.id] = [kept]
            entries.append(Entry(m.text, fmt, project, None, m.at or "", m.id, "user"))
        previous = m
    return entries, accepted


def _import_conversation(vault: Vault, conv: Conversation, fmt: str, report: ImportReport, project: str | None,
                         distil: ModelDistiller | None) -> None:
    keyed = {m.id: message_key(fmt, conv, m.id, m.text) for m in conv.messages if m.role == "user"}
    seen = vault.read(lambda conn: store.seen_keys(conn, keyed.values()))
    entries, ready = conversation_entries(conv, fmt, project, {i for i, k in keyed.items() if k not in seen})
    if not entries:
        return
    if distil is not None:  # before the write: the writer never waits on the model
        ready.update(distil(entries))

    def job(conn: apsw.Connection, change: Change) -> tuple[int, Any, list[str]]:
        now_seen = store.seen_keys(conn, [keyed[e.entry_id] for e in entries if e.persons])
        window = [e for e in entries if not (e.persons and keyed[e.entry_id] in now_seen)]
        people = [e for e in window if e.persons]
        if not people:
            return 0, None, []
        result = store_window(conn, change, window, kind=f"import_{fmt}", tier="import", title=conv.title,
                              bullets=ready)
        store.mark_seen_many(conn, change, [(keyed[e.entry_id], conv.id) for e in people])
        return len(people), result, change.secrets_removed

    n, result, removed = vault.write(job)
    report.secrets_removed += removed
    if n:
        report.imported += 1
        report.messages += n
        report.facts += len(result.fact_ids)
        report.conversation_memories += len(result.turn_ids)
        report.distilled += len(result.distilled_ids)
        report.accepted += len(result.accepted_ids)
        report.fact_ids += result.fact_ids
        report.distilled_ids += result.distilled_ids
