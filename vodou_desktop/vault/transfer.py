"""SQL for the whole-vault export and import (DATA-2), outside the governed fact columns.

Facts and documents are read through ``query.facts_for_export`` / ``documents_for_export``; this
module reads the rest (sources, entities, operator memory, site rules, projects, settings, forget
operations, the input labels of capture batches) and writes an import. Every statement names its
table and its columns itself (``TABLE_COLUMNS`` and the literal lists below); a record's values are
bound parameters, and one statement runs per call. Into an empty vault an import keeps every id,
time stamp, group, thread and lineage as exported; into a vault that already holds memories it
gives new ids (the caller reports the mapping), finds what the vault holds already and merges it
(``merge_fact``: the rules of sync, docs/sync.md). Sources are written by the one provenance writer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.vault import retraction as r
from vodou_desktop.vault.connection import batched, marks, scalar
from vodou_desktop.vault.facts import (
    GLOBAL_KINDS,
    PAGE_SET_RANK,
    clean_project,
    clean_text,
    content_hash,
    insert_document,
    insert_fact,
)
from vodou_desktop.vault.opm_store import SOURCE as OPM_SOURCE
from vodou_desktop.vault.opm_store import canonical_key
from vodou_desktop.vault.secret_filter import scrub
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

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


# The columns export writes and import reads, per owner table: the product's own lists, never a
# record's keys (tests/unit/data/test_export_schema.py checks them against the tables' columns).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "settings": ("key", "value"),
    "site_rules": ("host", "mode", "created_at", "updated_at"),
    "projects": ("name", "path", "created_at"),
    "operator_memory": ("id", "category", "content", "canonical_key", "salience", "revision", "predecessor",
                        "source_ref", "original_source_ref", "reauthorized_at", "expires_at", "last_used_at",
                        "created_at", "updated_at"),
    "operator_memory_history": ("id", "memory_id", "category", "revision", "content", "source_ref",
                                "successor_revision", "superseded_at"),
}


def table_rows(conn: apsw.Connection, table: str, order: str) -> list[dict[str, Any]]:
    """Every row of one of the small owner tables, as column → value (its fixed columns only)."""
    names = TABLE_COLUMNS[table]
    rows = conn.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY {order}")
    return [dict(zip(names, row, strict=True)) for row in rows]


# -- import -----------------------------------------------------------------------------------------
# Every statement below names its table and columns itself; a record's values are bound parameters,
# and its keys are never read except as the fields of the export schema (data/export_schema.py).

def is_empty(conn: apsw.Connection) -> bool:
    """No content yet (settings and projects may exist already: a fresh vault has none)."""
    return not any(scalar(conn, f"SELECT count(*) FROM {t}") for t in CONTENT_TABLES)


@dataclass
class Ids:
    """How the import numbers what it writes: the exported ids (into an empty vault), or new ones.
    Maps exported id → id in this vault, per table, for every row written or found already here."""
    keep: bool
    sources: dict[int, int] = field(default_factory=dict)
    chunks: dict[int, int] = field(default_factory=dict)
    events: dict[int, int] = field(default_factory=dict)

    def wanted(self, exported: int | None) -> int | None:
        return exported if self.keep else None


def insert_settings(conn: apsw.Connection, change: Change, rows: Iterable[dict[str, Any]]) -> int:
    """Settings the export schema allows; the vault's own value of a setting always wins."""
    added = 0
    for row in rows:
        conn.execute("INSERT OR IGNORE INTO settings(key, value) VALUES (?, ?)", (row["key"], row["value"]))
        added += conn.changes()
    change.touch("settings")
    return added


def insert_site_rules(conn: apsw.Connection, change: Change, rows: Iterable[dict[str, Any]]) -> int:
    """A rule for a host the vault has no rule for; the vault's own rule for a host always wins (a file
    never reopens a site the person closed here)."""
    added = 0
    for row in rows:
        conn.execute("INSERT OR IGNORE INTO site_rules(host, mode, created_at, updated_at) VALUES (?, ?, ?, ?)",
                     (row["host"], row["mode"], row["created_at"], row["updated_at"]))
        if conn.changes():
            added += 1
            change.touch("site_rules", hosts=[row["host"]])
    return added


def insert_projects(conn: apsw.Connection, change: Change, rows: Iterable[dict[str, Any]]) -> int:
    added = 0
    for row in rows:
        conn.execute("INSERT OR IGNORE INTO projects(name, path, created_at) VALUES (?, ?, ?)",
                     (row["name"], row["path"], row["created_at"]))
        added += conn.changes()
    change.touch("projects")
    return added


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


def insert_operation(conn: apsw.Connection, change: Change, op: dict[str, Any], ids: Ids) -> bool:
    """A forget or correction operation, once (the same id is the same operation, as in sync). Where the
    memories got new ids, an operation that names a memory by its row id names its new one."""
    target, detail = op["target"], op["detail"]
    if not ids.keep and op["kind"] in (r.FORGET_FACT_KIND, r.CORRECT_FACT_KIND):
        target = _renumbered(target, ids)
        if detail and op["kind"] == r.CORRECT_FACT_KIND:
            try:
                parsed = json.loads(detail)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("replaces"), int):
                parsed["replaces"] = ids.chunks.get(parsed["replaces"], parsed["replaces"])
                detail = json.dumps(parsed, sort_keys=True)
    conn.execute("INSERT OR IGNORE INTO operations(id, kind, target, detail, created_at, undone_at)"
                 " VALUES (?,?,?,?,?,?)", (op["id"], op["kind"], target, detail, op["created_at"], op["undone_at"]))
    change.touch("operations")
    return conn.changes() > 0


def _renumbered(target: str | None, ids: Ids) -> str | None:
    if target is None or not target.isdigit():
        return target
    return str(ids.chunks.get(int(target), int(target)))


def insert_source_event(conn: apsw.Connection, change: Change, event: dict[str, Any], ids: Ids) -> bool:
    """One input label of a capture batch, unless the same label is here already (then the memories
    that name it name the one here)."""
    values = {**{f: None for f in OPTIONAL_EVENT_FIELDS}, **event, "id": ids.wanted(event.get("id"))}
    same = conn.execute("SELECT id FROM source_events WHERE batch_id = ? AND entry_id = ? AND project_id IS ?"
                        " AND scope IS ? AND tool IS ? AND event_at IS ? AND created_at = ? AND role IS ?",
                        (values["batch_id"], values["entry_id"], values["project_id"], values["scope"],
                         values["tool"], values["event_at"], values["created_at"], values["role"])).fetchone()
    if same is not None:
        if event.get("id") is not None:
            ids.events[event["id"]] = int(same[0])
        return False
    conn.execute(f"INSERT INTO source_events({', '.join(EVENT_FIELDS)}) VALUES ({marks(EVENT_FIELDS)})",
                 [values[f] for f in EVENT_FIELDS])
    if event.get("id") is not None:
        ids.events[event["id"]] = int(conn.last_insert_rowid())
    change.touch("source_events")
    return True


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


# -- memories: added once (by global id, else by text, project and source), merged by sync's rules ----

class MemoriesHere:
    """Finds the memory of this vault that an exported record is: the one with its global id
    (``sync_id``, an index lookup); for a record without one, a memory with the same text, project and
    source (kind and address), found in one pass over the vault's memories whose text the file holds."""

    def __init__(self, conn: apsw.Connection, records: Sequence[dict[str, Any]]) -> None:
        self.conn = conn
        texts = {_clean(m["text"]) for m in records if not m.get("sync_id")}
        self.by_content: dict[tuple[str, str | None, str, str | None], int] = {}
        if texts:
            rows = conn.execute("SELECT c.id, c.text, c.project_id, s.kind, s.source_url FROM chunks c"
                                " JOIN memory_sources s ON s.id = c.source_id WHERE c.document_id IS NULL"
                                " ORDER BY c.id DESC")
            for fact_id, text, project, kind, url in rows:
                if text in texts:
                    self.by_content[(text, project, kind, url)] = int(fact_id)  # the oldest wins

    def find(self, m: dict[str, Any]) -> int | None:
        if m.get("sync_id"):
            found = scalar(self.conn, "SELECT id FROM chunks WHERE sync_id = ? AND document_id IS NULL",
                           (m["sync_id"],))
            return None if found is None else int(found)
        project = None if m["kind"] in GLOBAL_KINDS else clean_project(m["project"])
        return self.by_content.get((_clean(m["text"]), project, m["source"]["kind"], m["source"]["url"]))

    def added(self, fact_id: int, m: dict[str, Any]) -> None:
        """A memory written now is there for the records after it (the same memory twice in one file)."""
        if not m.get("sync_id"):
            project = None if m["kind"] in GLOBAL_KINDS else clean_project(m["project"])
            self.by_content.setdefault((_clean(m["text"]), project, m["source"]["kind"], m["source"]["url"]), fact_id)


def _clean(text: str) -> str:
    try:
        return clean_text(text)
    except InvalidInput:
        return text


def erased_here(conn: apsw.Connection, m: dict[str, Any]) -> bool:
    """Erased on this computer (or on one it syncs with): erase beats everything, an import included."""
    return bool(m.get("sync_id")) and conn.execute(
        "SELECT 1 FROM sync_tombstones WHERE entity = 'fact' AND key = ?", (m["sync_id"],)).fetchone() is not None


def import_fact(conn: apsw.Connection, change: Change, m: dict[str, Any], predecessor: int | None,
                entity_ids: dict[str, int], ids: Ids) -> int:
    """One exported memory, exactly as it was (its successor is set later), in its thread, under its
    global id (a memory moved, restored or imported twice is the same memory everywhere)."""
    source_id = source_from(conn, change, m["source"], ids)
    exported_thread = m.get("thread_id")
    # its conversation: the thread's first memory as numbered here (the same id when ids are kept,
    # even if that memory was left out of the export); a thread whose start is missing starts anew
    thread = None if exported_thread is None else ids.chunks.get(exported_thread, exported_thread if ids.keep else None)
    fact_id = insert_fact(conn, change, text=m["text"], source_id=source_id, kind=m["kind"], project=m["project"],
                          scope=m["scope"], valid_at=m["valid_at"], valid_precision=m["valid_precision"],
                          created_at=m["created_at"], predecessor_id=predecessor, revision=m["revision"],
                          fact_id=ids.wanted(m.get("id")), sync_id=m.get("sync_id") or None,
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


def _undone_here(conn: apsw.Connection, op: str) -> bool:
    row = conn.execute("SELECT kind, undone_at FROM operations WHERE id = ?", (op,)).fetchone()
    return row is not None and row[1] is not None and row[0] != r.CORRECT_FACT_KIND


def merge_fact(conn: apsw.Connection, change: Change, fact_id: int, m: dict[str, Any],
               entity_ids: dict[str, int]) -> bool:
    """A memory already here meets its exported record: each field by sync's rule for it (docs/sync.md),
    with the time the file records as its stamp. A field still at its default never beats a change; a
    forget applies unless it is later than none here or was undone here (an undo comes after its forget);
    a pin is kept; a page link by precedence (manual beats token beats source). True when anything
    changed (the caller settles revisions and groups as sync does)."""
    row = conn.execute("SELECT invalid_at, source_id, pinned_from, page_set_by FROM chunks WHERE id = ?",
                       (fact_id,)).fetchone()
    assert row is not None, f"no memory {fact_id}"
    invalid_at, source_id, pinned_from, page_set_by = row
    changed = False
    if m["forgotten_at"] and m["forgotten_by"] and not _undone_here(conn, m["forgotten_by"]) and (
            invalid_at is None or m["forgotten_at"] > invalid_at):
        conn.execute("UPDATE chunks SET invalid_at = ?, invalidated_by = ? WHERE id = ?",
                     (m["forgotten_at"], m["forgotten_by"], fact_id))
        changed = True
    if m["pinned"] and pinned_from is None:
        src = conn.execute("SELECT kind, source_url, title, tool, batch_id FROM memory_sources WHERE id = ?",
                           (source_id,)).fetchone()
        assert src is not None, f"no source {source_id}"
        copy = stamp_source(conn, change, kind=src[0], tier="pinned", url=src[1], title=src[2], tool=src[3],
                            batch_id=src[4], created_at=m["source"]["created_at"])
        conn.execute("UPDATE chunks SET source_id = ?, pinned_from = ? WHERE id = ?", (copy, source_id, fact_id))
        changed = True
    page = m["page"]
    if PAGE_SET_RANK.get(page["set_by"], 0) > PAGE_SET_RANK.get(page_set_by, 0):
        conn.execute("UPDATE chunks SET page_url = ?, page_key = ?, page_host = ?, page_set_by = ? WHERE id = ?",
                     (page["url"], page["key"], page["host"], page["set_by"], fact_id))
        changed = True
    for name in m["entities"]:
        conn.execute("INSERT OR IGNORE INTO entity_links(entity_id, chunk_id) VALUES (?, ?)",
                     (entity_ids[name], fact_id))
    if changed:
        change.touch("chunks", chunk_ids=[fact_id])
    return changed


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


def set_predecessors(conn: apsw.Connection, change: Change, pairs: Iterable[tuple[int, int]]) -> None:
    """(revision, the one it revised): the links an import could not write with the row."""
    for fact_id, predecessor in pairs:
        conn.execute("UPDATE chunks SET predecessor_id = ? WHERE id = ? AND predecessor_id IS NOT ?",
                     (predecessor, fact_id, predecessor))
        change.touch("chunks", chunk_ids=[fact_id, predecessor])


def set_superseded_by(conn: apsw.Connection, change: Change,
                      pairs: Iterable[tuple[int, int, str | None, bool]]) -> set[int]:
    """``(loser, winner, at, loser_was_here)``: a memory written now takes its successor as exported; one
    already here takes it by last-writer-wins on the time (none here: the file's). Returns the memories
    already here that changed."""
    merged: set[int] = set()
    for loser, winner, at, was_here in pairs:
        if was_here:
            here = conn.execute("SELECT superseded_by, superseded_at FROM chunks WHERE id = ?", (loser,)).fetchone()
            assert here is not None, f"no memory {loser}"
            if here[0] == winner or (here[0] is not None and (at or "") <= (here[1] or "")):
                continue
            conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (winner, at, loser))
            merged.add(loser)
        else:
            conn.execute("UPDATE chunks SET superseded_by = ? WHERE id = ?", (winner, loser))
        change.touch("chunks", chunk_ids=[loser, winner])
    return merged


# -- documents: added once (the same text from the same address in the same project) ---------------

def document_erased_here(conn: apsw.Connection, d: dict[str, Any]) -> bool:
    return bool(d.get("sync_id")) and conn.execute(
        "SELECT 1 FROM sync_tombstones WHERE entity = 'doc' AND key = ?", (d["sync_id"],)).fetchone() is not None


def document_here(conn: apsw.Connection, d: dict[str, Any]) -> int | None:
    """The document already here: by its global id, else by its text, address and project."""
    if d.get("sync_id"):
        found = scalar(conn, "SELECT id FROM documents WHERE sync_id = ?", (d["sync_id"],))
        if found is not None:
            return int(found)
    full = "\n\n".join(d["chunks"])
    found = scalar(conn, "SELECT id FROM documents WHERE content_hash = ? AND page_url IS ? AND project_id IS ?",
                   (content_hash(full), d["source"]["url"], clean_project(d["project"])))
    return None if found is None else int(found)


def import_document(conn: apsw.Connection, change: Change, d: dict[str, Any], ids: Ids) -> int:
    source_id = source_from(conn, change, d["source"], ids)
    keep = ids.keep and d.get("id") is not None and d.get("chunk_ids") is not None
    doc_id = insert_document(conn, change, source_id=source_id, title=d["title"], chunks=d["chunks"],
                             project=d["project"], created_at=d["created_at"],
                             doc_id=d["id"] if keep else None, chunk_ids=d["chunk_ids"] if keep else None,
                             sync_id=d.get("sync_id") or None)
    conn.execute("UPDATE documents SET invalid_at = ?, invalidated_by = ? WHERE id = ?",
                 (d["forgotten_at"], d["forgotten_by"], doc_id))
    return doc_id


def merge_document(conn: apsw.Connection, change: Change, doc_id: int, d: dict[str, Any]) -> bool:
    """A document already here: forgotten by the file's forget on the same rule as a memory."""
    invalid_at = scalar(conn, "SELECT invalid_at FROM documents WHERE id = ?", (doc_id,))
    if not (d["forgotten_at"] and d["forgotten_by"]) or _undone_here(conn, d["forgotten_by"]) or (
            invalid_at is not None and d["forgotten_at"] <= invalid_at):
        return False
    conn.execute("UPDATE documents SET invalid_at = ?, invalidated_by = ? WHERE id = ?",
                 (d["forgotten_at"], d["forgotten_by"], doc_id))
    change.touch("documents")
    return True


# -- operator memory: by its id (the same on every computer); the vault's own row wins --------------

def insert_operator_memory(conn: apsw.Connection, change: Change, row: dict[str, Any]) -> bool:
    if conn.execute("SELECT 1 FROM sync_tombstones WHERE entity = 'opm' AND key = ?", (row["id"],)).fetchone():
        return False  # erased here
    cols = TABLE_COLUMNS["operator_memory"]
    values = dict(row)
    clean = scrub(conn, change, row["content"], OPM_SOURCE)  # DATA-8: a file's text is scrubbed as typed text is
    if clean != row["content"]:
        values.update(content=clean, canonical_key=canonical_key(clean))
    conn.execute(f"INSERT OR IGNORE INTO operator_memory({', '.join(cols)}) VALUES ({marks(cols)})",
                 [values[c] for c in cols])
    change.touch("operator_memory")
    return conn.changes() > 0


def insert_operator_history(conn: apsw.Connection, change: Change, row: dict[str, Any], ids: Ids) -> bool:
    if conn.execute("SELECT 1 FROM operator_memory_history WHERE memory_id = ? AND revision = ?",
                    (row["memory_id"], row["revision"])).fetchone() is not None:
        return False
    cols = TABLE_COLUMNS["operator_memory_history"]
    values = {**row, "id": ids.wanted(row.get("id")), "content": scrub(conn, change, row["content"], OPM_SOURCE)}
    conn.execute(f"INSERT INTO operator_memory_history({', '.join(cols)}) VALUES ({marks(cols)})",
                 [values[c] for c in cols])
    change.touch("operator_memory_history")
    return True
