"""Importing ChatGPT and Claude exports into the vault (ING-5, seed 004).

- Each message's own timestamp becomes the fact's ``valid_at`` (precision ``instant``);
  ``created_at`` stays the import time, so an import of old history never looks newer than it is.
- Tier ``import``; only the person's own messages are distilled (assistant text is the model
  talking, not memory about the person).
- One write transaction per conversation: a conversation lands whole or not at all. A malformed
  conversation is reported and nothing from it is stored; the others still import.
- Idempotent: every imported message is recorded in ``ingest_seen`` under a content hash of
  (format, conversation, message, text) in the same transaction, so a re-import adds nothing and
  a later export of a longer conversation adds only its new messages.
- Each conversation is one batch: its messages are recorded as ``source_events`` (project NULL).
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
from vodou_desktop.ingest.exports import (
    MAX_EXPORT_BYTES,
    Conversation,
    MalformedConversation,
    check_format,
    conversations,
    guess_format,
    load_export,
)
from vodou_desktop.ingest.window import Entry, store_window
from vodou_desktop.vault import Change, Vault
from vodou_desktop.vault import ingest_store as store
from vodou_desktop.vault import journal_store as journal

Progress = Callable[[int, int], None]


@dataclass
class ImportReport:
    format: str
    conversations: int = 0
    imported: int = 0  # conversations that added at least one message
    messages: int = 0  # new messages recorded
    facts: int = 0
    malformed: list[str] = field(default_factory=list)
    fact_ids: list[int] = field(default_factory=list)
    secrets_removed: list[str] = field(default_factory=list)  # kinds, one per secret (vault/secret_filter.py)
    op: str | None = None  # the undo journal's entry for the whole import (None: it added nothing)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("fact_ids")
        return data


def message_key(fmt: str, conv: Conversation, msg_id: str, text: str) -> str:
    digest = hashlib.sha256("\x1f".join((fmt, conv.id, msg_id, text)).encode()).hexdigest()
    return f"import:{fmt}:{digest}"


AUTO = "auto"  # guess the format from the file (the desktop's Import…)


def import_export(vault: Vault, path: Path, fmt: str, *, progress: Progress | None = None,
                  cancel: threading.Event | None = None, max_bytes: int = MAX_EXPORT_BYTES) -> ImportReport:
    """Import one export file; file-level problems raise ``InvalidInput`` before any write."""
    data = load_export(Path(path), max_bytes)
    if fmt == AUTO:
        fmt = guess_format(data) or _unknown_format(path)
    check_format(data, fmt, path)
    report = ImportReport(fmt, conversations=len(data))
    for done, item in enumerate(conversations(data, fmt), start=1):
        if cancel is not None and cancel.is_set():
            break
        if isinstance(item, MalformedConversation):
            report.malformed.append(str(item))
        else:
            _import_conversation(vault, item, fmt, report)
        if progress:
            progress(done, report.conversations)
    # one undo for the whole import (each conversation was its own transaction)
    report.op = vault.write(lambda c, ch: journal.record_import(c, ch, report.fact_ids, f"{Path(path).name} ({fmt})"))
    return report


def _unknown_format(path: Path) -> str:
    raise InvalidInput(f"{path} is neither a ChatGPT nor a Claude conversations export")


def _import_conversation(vault: Vault, conv: Conversation, fmt: str, report: ImportReport) -> None:
    user_msgs = [m for m in conv.messages if m.role == "user"]
    keyed = [(message_key(fmt, conv, m.id, m.text), m) for m in user_msgs]

    def job(conn: apsw.Connection, change: Change) -> tuple[int, list[int], list[str]]:
        seen = store.seen_keys(conn, [k for k, _ in keyed])
        fresh = [(k, m) for k, m in keyed if k not in seen]
        if not fresh:
            return 0, [], []
        entries = [Entry(m.text, fmt, None, None, m.at or "", m.id) for _, m in fresh]
        result = store_window(conn, change, entries, kind=f"import_{fmt}", tier="import", title=conv.title)
        store.mark_seen_many(conn, change, [(key, conv.id) for key, _ in fresh])
        return len(fresh), result.fact_ids, change.secrets_removed

    n, ids, removed = vault.write(job)
    report.secrets_removed += removed
    if n:
        report.imported += 1
        report.messages += n
        report.facts += len(ids)
        report.fact_ids += ids
