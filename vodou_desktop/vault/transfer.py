"""SQL for the whole-vault export and import (DATA-2), outside the governed fact columns.

Facts and documents are read through ``query.facts_for_export`` / ``documents_for_export``; this
module reads the rest (sources, entities, operator memory, site rules, projects, settings, forget
operations) and writes an import. An import only goes into an empty vault, so it can keep every
time stamp, group and lineage as exported; sources are written by the one provenance writer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import apsw

from vodou_desktop.errors import Conflict
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
                  "site_rules", "entities", "operations")


def sources_by_id(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for part in batched(sorted(set(ids))):
        rows = conn.execute("SELECT id, kind, tier, source_url, title, tool, batch_id, created_at"
                            f" FROM memory_sources WHERE id IN ({marks(part)})", part)
        out.update({int(r[0]): dict(zip(SOURCE_FIELDS, r[1:], strict=True)) for r in rows})
    return out


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
        out.append({"name": name, "created_at": created_at, "aliases": aliases})
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

def require_empty(conn: apsw.Connection) -> None:
    busy = [t for t in CONTENT_TABLES if scalar(conn, f"SELECT count(*) FROM {t}")]
    if busy:
        raise Conflict("An import of a Vodou export goes into an empty vault only; this one already holds "
                       f"{', '.join(busy)}. Use a new vault (--vault PATH).")


def insert_rows(conn: apsw.Connection, change: Change, table: str, rows: Iterable[dict[str, Any]]) -> None:
    assert table in ("site_rules", "projects", "settings", "operator_memory", "operator_memory_history")
    for row in rows:
        cols = list(row)
        conn.execute(f"INSERT OR REPLACE INTO {table}({', '.join(cols)}) VALUES ({marks(cols)})",
                     [row[c] for c in cols])
    change.touch(table)


def insert_entity(conn: apsw.Connection, change: Change, name: str, created_at: str, aliases: Iterable[str]) -> int:
    conn.execute("INSERT INTO entities(name, created_at) VALUES (?, ?)", (name, created_at))
    entity_id = int(conn.last_insert_rowid())
    for alias in aliases:
        conn.execute("INSERT INTO entity_aliases(alias, entity_id) VALUES (?, ?)", (alias, entity_id))
    change.touch("entities")
    return entity_id


def insert_operation(conn: apsw.Connection, change: Change, op: dict[str, Any]) -> None:
    conn.execute("INSERT INTO operations(id, kind, target, detail, created_at, undone_at) VALUES (?,?,?,?,?,?)",
                 (op["id"], op["kind"], op["target"], op["detail"], op["created_at"], op["undone_at"]))
    change.touch("operations")


def source_from(conn: apsw.Connection, change: Change, src: dict[str, Any]) -> int:
    return stamp_source(conn, change, kind=src["kind"], tier=src["tier"], url=src["url"], title=src["title"],
                        tool=src["tool"], batch_id=src["batch_id"], created_at=src["created_at"])


def import_fact(conn: apsw.Connection, change: Change, m: dict[str, Any], predecessor: int | None,
                entity_ids: dict[str, int]) -> int:
    """One exported memory, exactly as it was (except its id and its successor, set later)."""
    source_id = source_from(conn, change, m["source"])
    fact_id = insert_fact(conn, change, text=m["text"], source_id=source_id, kind=m["kind"], project=m["project"],
                          scope=m["scope"], valid_at=m["valid_at"], valid_precision=m["valid_precision"],
                          created_at=m["created_at"], predecessor_id=predecessor, revision=m["revision"])
    pinned_from = source_from(conn, change, m["pinned_from"]) if m["pinned_from"] else None
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


def set_superseded_by(conn: apsw.Connection, change: Change, pairs: Iterable[tuple[int, int]]) -> None:
    for loser, winner in pairs:
        conn.execute("UPDATE chunks SET superseded_by = ? WHERE id = ?", (winner, loser))
        change.touch("chunks", chunk_ids=[loser, winner])


def import_document(conn: apsw.Connection, change: Change, d: dict[str, Any]) -> int:
    source_id = source_from(conn, change, d["source"])
    doc_id = insert_document(conn, change, source_id=source_id, title=d["title"], chunks=d["chunks"],
                             project=d["project"], created_at=d["created_at"])
    conn.execute("UPDATE documents SET invalid_at = ?, invalidated_by = ? WHERE id = ?",
                 (d["forgotten_at"], d["forgotten_by"], doc_id))
    return doc_id
