"""SQL for ingest bookkeeping: the capture buffer, batch inputs (``source_events``) and what
importers and watchers have already seen (``ingest_seen``).

The capture buffer lives in ``ingest_seen`` under ``buffer:<entry id>`` keys so that a terminal
hook, the watcher and ``vodou capture flush`` (separate processes) share one queue. A flush reads
and deletes its entries inside the same write transaction that stores the facts, so an entry is
turned into facts exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import apsw

from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import batched, marks
from vodou_desktop.vault.secret_filter import scrub
from vodou_desktop.vault.writer import Change

BUFFER_PREFIX = "buffer:"
BUFFER_SOURCE = "capture"  # the source kind its entries are stored under (the secret filter's setting)


def seen_value(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM ingest_seen WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def seen_keys(conn: apsw.Connection, keys: Iterable[str]) -> set[str]:
    """The subset of ``keys`` already recorded."""
    found: set[str] = set()
    for part in batched(keys):
        sql = f"SELECT key FROM ingest_seen WHERE key IN ({marks(part)})"
        found.update(str(r[0]) for r in conn.execute(sql, part))
    return found


def mark_seen(conn: apsw.Connection, change: Change, key: str, value: str | None = None) -> None:
    mark_seen_many(conn, change, [(key, value)])


def mark_seen_many(conn: apsw.Connection, change: Change, items: Iterable[tuple[str, str | None]]) -> None:
    """Record each (key, value) pair as seen, in one statement (an import records every message)."""
    now = now_iso()
    conn.executemany(
        "INSERT INTO ingest_seen(key, value, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        [(key, value, now) for key, value in items],
    )
    change.touch("ingest_seen")


def forget_seen(conn: apsw.Connection, change: Change, key: str) -> None:
    conn.execute("DELETE FROM ingest_seen WHERE key = ?", (key,))
    change.touch("ingest_seen")


def buffer_entry(conn: apsw.Connection, change: Change, entry_id: str, entry: Mapping[str, Any]) -> None:
    entry = {**entry, "text": scrub(conn, change, str(entry["text"]), BUFFER_SOURCE)}  # DATA-8
    mark_seen(conn, change, BUFFER_PREFIX + entry_id, json.dumps(entry, sort_keys=True))
    change.touch("capture_buffer")


def buffered_entries(conn: apsw.Connection, limit: int = 10_000) -> list[tuple[str, dict[str, Any]]]:
    """Pending buffer entries as (entry id, fields), oldest event first."""
    rows = conn.execute(
        "SELECT key, value FROM ingest_seen WHERE key >= ? AND key < ? LIMIT ?",
        (BUFFER_PREFIX, BUFFER_PREFIX[:-1] + ";", limit),
    )
    out = [(str(k)[len(BUFFER_PREFIX):], json.loads(v)) for k, v in rows]
    out.sort(key=lambda item: (item[1].get("event_at") or "", item[0]))
    return out


def drop_buffered(conn: apsw.Connection, change: Change, entry_ids: Iterable[str]) -> None:
    for entry_id in entry_ids:
        conn.execute("DELETE FROM ingest_seen WHERE key = ?", (BUFFER_PREFIX + entry_id,))
    change.touch("capture_buffer")


def record_events(conn: apsw.Connection, change: Change, batch_id: str,
                  entries: Iterable[Mapping[str, Any]]) -> list[int]:
    """Write one ``source_events`` row per input of a batch (VAULT-5); returns their ids, in order.

    ``role`` says whose words an input is: ``user`` (the person), ``assistant`` (a reply the person
    accepted, kept for what it carries), or None (a capture, a note: the person's)."""
    created = now_iso()
    ids = []
    for e in entries:
        conn.execute(
            "INSERT INTO source_events(batch_id, entry_id, project_id, scope, tool, event_at, created_at, role)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (batch_id, str(e["entry_id"]), e.get("project"), e.get("scope"), e.get("tool"), e.get("event_at"),
             created, e.get("role")))
        ids.append(int(conn.last_insert_rowid()))
    change.touch("source_events")
    return ids


def events_for_batch(conn: apsw.Connection, batch_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, entry_id, project_id, scope, tool, event_at, role FROM source_events WHERE batch_id = ?"
        " ORDER BY id", (batch_id,),
    )
    return [{"id": r[0], "entry_id": r[1], "project": r[2], "scope": r[3], "tool": r[4], "event_at": r[5],
             "role": r[6]} for r in rows]
