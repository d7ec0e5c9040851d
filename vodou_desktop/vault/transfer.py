"""SQL for the whole-vault export and import (DATA-2), outside the governed fact columns.

Facts and documents are read through ``query.facts_for_export`` / ``documents_for_export``; this
module reads the rest (sources, entities, operator memory, site rules, projects, settings, forget
operations, the input labels of capture batches) and writes an import. Into an empty vault an
import keeps every id, time stamp, group, thread and lineage as exported; into a vault that already
holds memories it gives new ids (the caller reports the mapping). Sources are written by the one
provenance writer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from vodou_desktop.vault.connection import batched, marks, scalar
from vodou_desktop.vault.facts import insert_document, insert_fact
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

# Settings that never leave the vault: the key of erased hosts' keyed hashes (an importing vault
# makes its own; the hashes it protects are not exported either).
PRIVATE_SETTINGS = frozenset({"operations_host_key"})
SYNC_SETTINGS_PREFIX = "sync_"  # this device's sync identity, key and state: device-local, never exported


def is_private_setting(key: str) -> bool:
    return key in PRIVATE_SETTINGS or key.startswith(SYNC_SETTINGS_PREFIX)

SOURCE_FIELDS = ("kind", "tier", "url", "title", "tool", "batch_id", "created_at")
# Tables an import needs empty; settings and projects may exist already (a fresh vault has none).
CONTENT_TABLES = ("chunks", "documents", "memory_sources", "operator_memory", "operator_memory_history",
                  "site_rules", "entities", "operations", "source_events")


def sources_by_id(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for part in batched(sorted(set(ids))):
        rows = conn.execute("SELECT id, kind, tier, source_url, title, tool, batch_id, created_at"
                            f" FROM memory_sources WHERE id IN ({marks(part)})", part)
        out.update({int(r[0]): {"id": r[0], **dict(zip(SOURCE_FIELDS, r[1:], strict=True))} for r in rows})
    return out


EVENT_FIELDS = ("id", "batch_id", "entry_id", "project_id", "scope", "tool", "event_at", "created_at", "role")
OPTIONAL_EVENT_FIELDS = frozenset({"role"})  # absent from files written before it existed


def source_events_for(conn: apsw.Connection, batch_ids: Iterable[str]) -> list[dict[str, Any]]:
    """The input labels (``source_events``) of these capture batches, in id order."""
    out: list[dict[str, Any]] = []
    for part in batched(sorted(set(batch_ids))):
        rows = conn.execute(f"SELECT {', '.join(EVENT_FIELDS)} FROM source_events"
                            f" WHERE batch_id IN ({marks(part)}) ORDER BY id", part)
        out += [dict(zip(EVENT_FIELDS, r, strict=True)) for r in rows]
    return sorted(out, key=lambda e: e["id"])


def entity_names_by_chunk(conn: apsw.Connection, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for part in batched(chunk_ids):
        rows = conn.execute("SELECT l.chunk_id, e.name FROM entity_links l JOIN entities e ON e.id = l.entity_id"
                            f" WHERE l.chunk_id IN ({marks(part)}) ORDER BY e.name", part)
        for chunk_id, name in rows:
            out.setdefault(int(chunk_id), []).append(str(name))
    return out


def entities(conn: apsw.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT id, name, created_at FROM entities ORDER BY name")
    out = []
    for entity_id, name, created_at in rows.fetchall():
        aliases = sorted(str(a[0]) for a in conn.execute(
            "SELECT alias FROM entity_aliases WHERE entity_id = ?", (entity_id,)))
        out.append({"id": entity_id, "name": name, "created_at": created_at, "aliases": aliases})
    return out


def operations(conn: apsw.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
    wanted = sorted(set(ids))
    out = []
    for part in batched(wanted):
        rows = conn.execute("SELECT id, kind, target, detail, created_at, undone_at FROM operations"
                            f" WHERE id IN ({marks(part)}) ORDER BY id", part)
        out += [dict(zip(("id", "kind", "target", "detail", "created_at", "undone_at"), r, strict=True)) for r in rows]
    return out


def table_rows(conn: apsw.Connection, table: str, order: str) -> list[dict[str, Any]]:
    """Every row of one of the small owner tables, as column → value."""
    assert table in ("site_rules", "projects", "settings", "operator_memory", "operator_memory_history")
    names = [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")]
    rows = conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY {order}")
    return [dict(zip(names, row, strict=True)) for row in rows]


# -- import -----------------------------------------------------------------------------------------

def is_empty(conn: apsw.Connection) -> bool:
    """No content yet (settings and projects may exist already: a fresh vault has none)."""
    return not any(scalar(conn, f"SELECT count(*) FROM {t}") for t in CONTENT_TABLES)


@dataclass
class Ids:
    """How the import numbers what it writes: the exported ids (into an empty vault), or new ones.
    Maps exported id → id in this vault, per table, for every row written."""
    keep: bool
    sources: dict[int, int] = field(default_factory=dict)
    chunks: dict[int, int] = field(default_factory=dict)
    events: dict[int, int] = field(default_factory=dict)

    def wanted(self, exported: int | None) -> int | None:
        return exported if self.keep else None

    def keep_sync_id(self, exported: str | None) -> str | None:
        """A memory's global id is kept with its id (into an empty vault: the same memory, moved or
        restored); a copy into a vault that has memories is a new memory there, with a new one."""
        return exported if self.keep else None


def insert_rows(conn: apsw.Connection, change: Change, table: str, rows: Iterable[dict[str, Any]],
                *, replace: bool = True) -> None:
    """Owner-table rows as exported; ``replace=False`` keeps what the vault already has."""
    assert table in ("site_rules", "projects", "settings", "operator_memory", "operator_memory_history")
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    for row in rows:
        cols = list(row)
        conn.execute(f"{verb} INTO {table}({', '.join(cols)}) VALUES ({marks(cols)})", [row[c] for c in cols])
    change.touch(table)


def insert_entity(conn: apsw.Connection, change: Change, name: str, created_at: str, aliases: Iterable[str],
                  entity_id: int | None = None) -> int:
    """An entity (one of the same name already here is reused, its aliases added)."""
    found = scalar(conn, "SELECT id FROM entities WHERE name = ?", (name,))
    if found is None:
        conn.execute("INSERT INTO entities(id, name, created_at) VALUES (?, ?, ?)", (entity_id, name, created_at))
    existing = int(conn.last_insert_rowid()) if found is None else int(found)
    for alias in aliases:
        conn.execute("INSERT OR IGNORE INTO entity_aliases(alias, entity_id) VALUES (?, ?)", (alias, existing))
    change.touch("entities")
    return existing


def insert_operation(conn: apsw.Connection, change: Change, op: dict[str, Any]) -> None:
    conn.execute("INSERT OR IGNORE INTO operations(id, kind, target, detail, created_at, undone_at)"
                 " VALUES (?,?,?,?,?,?)",
                 (op["id"], op["kind"], op["target"], op["detail"], op["created_at"], op["undone_at"]))
    change.touch("operations")


def insert_source_event(conn: apsw.Connection, change: Change, event: dict[str, Any], ids: Ids) -> None:
    values = {**{f: None for f in OPTIONAL_EVENT_FIELDS}, **event, "id": ids.wanted(event["id"])}
    conn.execute(f"INSERT INTO source_events({', '.join(EVENT_FIELDS)}) VALUES ({marks(EVENT_FIELDS)})",
                 [values[f] for f in EVENT_FIELDS])
    if event.get("id") is not None:
        ids.events[event["id"]] = int(conn.last_insert_rowid())
    change.touch("source_events")


def source_from(conn: apsw.Connection, change: Change, src: dict[str, Any], ids: Ids) -> int:
    """The source row of an exported source, written once however many memories share it."""
    exported = src.get("id")
    if exported is not None and exported in ids.sources:
        return ids.sources[exported]
    new = stamp_source(conn, change, kind=src["kind"], tier=src["tier"], url=src["url"], title=src["title"],
                       tool=src["tool"], batch_id=src["batch_id"], created_at=src["created_at"],
                       source_id=ids.wanted(exported))
    if exported is not None:
        ids.sources[exported] = new
    return new


def import_fact(conn: apsw.Connection, change: Change, m: dict[str, Any], predecessor: int | None,
                entity_ids: dict[str, int], ids: Ids) -> int:
    """One exported memory, exactly as it was (its successor is set later), in its thread."""
    source_id = source_from(conn, change, m["source"], ids)
    exported_thread = m.get("thread_id")
    # its conversation: the thread's first memory as numbered here (the same id when ids are kept,
    # even if that memory was left out of the export); a thread whose start is missing starts anew
    thread = None if exported_thread is None else ids.chunks.get(exported_thread, exported_thread if ids.keep else None)
    fact_id = insert_fact(conn, change, text=m["text"], source_id=source_id, kind=m["kind"], project=m["project"],
                          scope=m["scope"], valid_at=m["valid_at"], valid_precision=m["valid_precision"],
                          created_at=m["created_at"], predecessor_id=predecessor, revision=m["revision"],
                          fact_id=ids.wanted(m.get("id")), sync_id=ids.keep_sync_id(m.get("sync_id")),
                          thread_id=thread,
                          thread_seq=m.get("thread_seq") if thread is not None else None,
                          infer_thread="thread_id" not in m,  # a version 1 file: inferred, as it was
                          source_event_id=ids.events.get(m["source_event"]) if m.get("source_event") is not None
                          else None, confidence=m.get("confidence"))
    if m.get("id") is not None:
        ids.chunks[m["id"]] = fact_id
    pinned_from = source_from(conn, change, m["pinned_from"], ids) if m["pinned_from"] else None
    page = m["page"]
    conn.execute(
        "UPDATE chunks SET invalid_at = ?, invalidated_by = ?, superseded_at = ?, fact_group = ?, is_canonical = ?,"
        " page_url = ?, page_key = ?, page_host = ?, page_set_by = ?, pinned_from = ?, valid_precision = ?"
        " WHERE id = ?",
        (m["forgotten_at"], m["forgotten_by"], m["superseded_at"], m["group"], int(m["canonical"]), page["url"],
         page["key"], page["host"], page["set_by"], pinned_from, m["valid_precision"], fact_id))
    for name in m["entities"]:
        conn.execute("INSERT INTO entity_links(entity_id, chunk_id) VALUES (?, ?)", (entity_ids[name], fact_id))
    return fact_id


def renumber_groups(conn: apsw.Connection, change: Change, members: Sequence[tuple[int, int]], ids: Ids) -> None:
    """Fact groups written with new ids: each exported group (a memory's id) becomes that memory's new
    id, or else its lowest new member's, so no group is shared with a memory already in the vault."""
    by_group: dict[int, list[int]] = {}
    for fact_id, group in members:
        by_group.setdefault(group, []).append(fact_id)
    for group, facts in by_group.items():
        new = ids.chunks.get(group, min(facts))
        for part in batched(facts):
            conn.execute(f"UPDATE chunks SET fact_group = ? WHERE id IN ({marks(part)})", [new, *part])
        change.touch("chunks", chunk_ids=facts)


def set_superseded_by(conn: apsw.Connection, change: Change, pairs: Iterable[tuple[int, int]]) -> None:
    for loser, winner in pairs:
        conn.execute("UPDATE chunks SET superseded_by = ? WHERE id = ?", (winner, loser))
        change.touch("chunks", chunk_ids=[loser, winner])


def import_document(conn: apsw.Connection, change: Change, d: dict[str, Any], ids: Ids) -> int:
    source_id = source_from(conn, change, d["source"], ids)
    keep = ids.keep and d.get("id") is not None and d.get("chunk_ids") is not None
    doc_id = insert_document(conn, change, source_id=source_id, title=d["title"], chunks=d["chunks"],
                             project=d["project"], created_at=d["created_at"],
                             doc_id=d["id"] if keep else None, chunk_ids=d["chunk_ids"] if keep else None)
    conn.execute("UPDATE documents SET invalid_at = ?, invalidated_by = ? WHERE id = ?",
                 (d["forgotten_at"], d["forgotten_by"], doc_id))
    return doc_id
