"""SQL for retraction (GOV-6..8): forget a host (soft, undoable), undo, erase (hard).

Forget stamps ``invalid_at`` and ``invalidated_by = <operation id>`` only on facts that are still
visible, so an undo that clears its own operation's stamps can never resurrect a fact hidden by
anything else. The ``operations`` table records each run. Every stamp is also kept as a *cover*
(``forget_covers``, ``document_covers``, filled by triggers): with sync, two operations made on two
computers can cover one row, and the row shows one of them; an undo of that one hides the row again
under the other (``settle_hidden``), the same on every computer. Erase deletes rows; the FTS triggers
with ``secure-delete`` remove the text from the index, ``secure_delete`` zeroes freed pages, and
the caller checkpoints the WAL.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import apsw

from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import batched, marks
from vodou_desktop.vault.query import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.settings_store import get_setting, set_setting
from vodou_desktop.vault.writer import Change

TIER_RANK = "CASE s.tier WHEN 'pinned' THEN 0 WHEN 'first_party' THEN 1 WHEN 'capture' THEN 2 ELSE 3 END"
FORGET_KIND = "forget_host"
FORGET_FACT_KIND = "forget_fact"
FORGET_DOCUMENT_KIND = "forget_document"
FORGET_TOOL_KIND = "forget_tool"
FORGET_FACTS_KIND = "forget_facts"  # many memories at once (a selection); what it named is in its items
CORRECT_FACT_KIND = "correct_fact"  # a correction (by the person or an AI tool): undone by hiding the new revision
UNDO_MOVE_KIND = "undo_move"  # hides the revisions an undone move wrote; its target is the move
UNDO_IMPORT_KIND = "undo_import"  # hides what an undone import added; its target is the import
UNDOABLE_KINDS = (FORGET_KIND, FORGET_FACT_KIND, FORGET_DOCUMENT_KIND, FORGET_TOOL_KIND, FORGET_FACTS_KIND,
                  CORRECT_FACT_KIND)
# Operations that hide rows while they are not undone (a cover of one hides its row; docs/sync.md)
FORGET_KINDS = (FORGET_KIND, FORGET_FACT_KIND, FORGET_DOCUMENT_KIND, FORGET_TOOL_KIND, FORGET_FACTS_KIND,
                UNDO_MOVE_KIND, UNDO_IMPORT_KIND)
ERASE_HOST_KIND = "erase_host"
ERASE_FACTS_KIND = "erase_facts"
ERASE_KINDS = (ERASE_HOST_KIND, "erase_fact", "erase_document", ERASE_FACTS_KIND)
HOST_KEY_SETTING = "operations_host_key"  # per-vault random key for erased hosts' keyed hashes


def keyed_host(conn: apsw.Connection, change: Change, host: str) -> str:
    """What an operation keeps of a host it erased: a keyed hash (HMAC-SHA256 under a random key of
    this vault), so the same host gives the same value in this vault but its name is not recoverable
    from the file by guessing without the key, nor readable at all."""
    key = get_setting(conn, HOST_KEY_SETTING)
    if key is None:
        key = secrets.token_hex(32)
        set_setting(conn, change, HOST_KEY_SETTING, key)
    return "host-hmac:" + hmac.new(bytes.fromhex(key), host.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def redact_host_targets(conn: apsw.Connection, change: Change, host: str, keyed: str) -> bool:
    """Earlier operations on ``host`` or its subdomains stop naming it (their facts are erased). True when
    one did."""
    conn.execute("UPDATE operations SET target = ? WHERE kind = ? AND (target = ? OR target LIKE ? ESCAPE '\\')",
                 (keyed, FORGET_KIND, host, _like(host)))
    redacted = conn.changes() > 0
    change.touch("operations")
    return redacted


SYNC_HOST_KEY_SETTING = "sync_host_key"  # the same on every computer of a synced vault (derived from its key)


def sync_keyed_host(conn: apsw.Connection, host: str) -> str | None:
    """An erased host as the other computers of a synced vault can recognise it, and nobody else: a keyed
    hash under the synced vault's host key (None when this vault does not sync)."""
    key = get_setting(conn, SYNC_HOST_KEY_SETTING)
    return None if key is None else _host_mac(bytes.fromhex(key), host)


def _host_mac(key: bytes, host: str) -> str:
    return hmac.new(key, host.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def parent_hosts(host: str) -> list[str]:
    """A host and every parent domain of it (no bare TLD)."""
    labels = host.split(".")
    if ":" in host or len(labels) < 2:
        return [host]
    return [".".join(labels[i:]) for i in range(len(labels) - 1)]


def hosts_matching(conn: apsw.Connection, mac: str) -> list[str]:
    """The hosts named in this vault (sources, pages, documents, operations on a host) that are, or are a
    subdomain of, the host whose ``sync_keyed_host`` is ``mac``: that host itself, as it is named here."""
    names = {str(h[0]) for h in conn.execute(
        "SELECT source_host FROM memory_sources WHERE source_host IS NOT NULL UNION SELECT page_host FROM chunks"
        " WHERE page_host IS NOT NULL UNION SELECT page_host FROM documents WHERE page_host IS NOT NULL"
        " UNION SELECT target FROM operations WHERE kind = ? AND target NOT LIKE 'host-hmac:%'", (FORGET_KIND,))}
    key = get_setting(conn, SYNC_HOST_KEY_SETTING)
    if key is None:
        return []
    secret = bytes.fromhex(key)
    return sorted({parent for name in names for parent in parent_hosts(name) if _host_mac(secret, parent) == mac})


def _like(host: str) -> str:
    return "%." + host.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _host_clause(alias: str = "c") -> str:
    return (f"({alias}.page_host = :host OR {alias}.page_host LIKE :like ESCAPE '\\'"
            f" OR {alias}.source_id IN (SELECT id FROM memory_sources WHERE source_host = :host"
            " OR source_host LIKE :like ESCAPE '\\'))")


def visible_host_fact_ids(conn: apsw.Connection, host: str) -> list[int]:
    """Visible facts (not document chunks) whose source host or page host is ``host`` or below."""
    sql = (f"SELECT c.id FROM chunks c WHERE c.document_id IS NULL AND c.invalid_at IS NULL"
           f" AND {_host_clause()} ORDER BY c.id")
    return [int(r[0]) for r in conn.execute(sql, {"host": host, "like": _like(host)})]


def visible_tool_fact_ids(conn: apsw.Connection, tool: str) -> list[int]:
    """Visible facts (superseded ones too) whose source was written by ``tool``, through the query builder."""
    where, params = FactFilter(project=ALL_PROJECTS, include_superseded=True, tools=(tool,)).where()
    sql = f"SELECT c.id FROM chunks c JOIN memory_sources s ON s.id = c.source_id WHERE {where} ORDER BY c.id"
    return [int(r[0]) for r in conn.execute(sql, params)]


def source_kinds_of(conn: apsw.Connection, ids: Sequence[int]) -> dict[str, int]:
    """How many of ``ids`` came from each source kind (``mcp``, ``capture``, ``cli``, …)."""
    counts: dict[str, int] = {}
    for part in batched(ids):
        sql = (f"SELECT s.kind, count(*) FROM chunks c JOIN memory_sources s ON s.id = c.source_id"
               f" WHERE c.id IN ({marks(part)}) GROUP BY s.kind")
        for kind, n in conn.execute(sql, part):
            counts[str(kind)] = counts.get(str(kind), 0) + int(n)
    return counts


def all_host_fact_ids(conn: apsw.Connection, host: str) -> list[int]:
    """Every fact of ``host``, hidden or not (for erase)."""
    sql = f"SELECT c.id FROM chunks c WHERE c.document_id IS NULL AND {_host_clause()} ORDER BY c.id"
    return [int(r[0]) for r in conn.execute(sql, {"host": host, "like": _like(host)})]


def fact_visibility(conn: apsw.Connection, fact_id: int) -> tuple[str | None, str | None] | None:
    """``(invalid_at, invalidated_by)`` of one fact (not a document chunk); None when there is no such fact."""
    row = conn.execute("SELECT invalid_at, invalidated_by FROM chunks WHERE id = ? AND document_id IS NULL",
                       (fact_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def live_document_count(conn: apsw.Connection, host: str) -> int:
    sql = ("SELECT count(*) FROM documents d WHERE d.invalid_at IS NULL AND (d.page_host = :host"
           " OR d.page_host LIKE :like ESCAPE '\\' OR d.source_id IN (SELECT id FROM memory_sources"
           " WHERE source_host = :host OR source_host LIKE :like ESCAPE '\\'))")
    row = conn.execute(sql, {"host": host, "like": _like(host)}).fetchone()
    return int(row[0]) if row else 0


def _document_host_clause() -> str:
    return ("(d.page_host = :host OR d.page_host LIKE :like ESCAPE '\\' OR d.source_id IN (SELECT id FROM"
            " memory_sources WHERE source_host = :host OR source_host LIKE :like ESCAPE '\\'))")


def host_document_ids(conn: apsw.Connection, host: str, *, live_only: bool) -> list[int]:
    """Library documents saved from ``host`` or below (only visible ones with ``live_only``)."""
    live = " AND d.invalid_at IS NULL" if live_only else ""
    sql = f"SELECT d.id FROM documents d WHERE {_document_host_clause()}{live} ORDER BY d.id"
    return [int(r[0]) for r in conn.execute(sql, {"host": host, "like": _like(host)})]


def document_visibility(conn: apsw.Connection, doc_id: int) -> tuple[str | None, str | None] | None:
    """``(invalid_at, invalidated_by)`` of one document; None when there is no such document."""
    row = conn.execute("SELECT invalid_at, invalidated_by FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def stamp_documents_invalid(conn: apsw.Connection, change: Change, ids: Sequence[int], op: str) -> int:
    """Hide the still-visible documents among ``ids`` under ``op``; returns how many."""
    when = now_iso()
    hidden = 0
    for part in batched(ids):
        conn.execute(f"UPDATE documents SET invalid_at = ?, invalidated_by = ? WHERE invalid_at IS NULL"
                     f" AND id IN ({marks(part)})", [when, op, *part])
        hidden += conn.changes()
    _touch_documents(conn, change, ids)
    return hidden


def clear_document_stamps(conn: apsw.Connection, change: Change, op: str) -> int:
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM documents WHERE invalidated_by = ?", (op,))]
    conn.execute("UPDATE documents SET invalid_at = NULL, invalidated_by = NULL WHERE invalidated_by = ?", (op,))
    _touch_documents(conn, change, ids)
    return len(ids)


def _touch_documents(conn: apsw.Connection, change: Change, ids: Sequence[int]) -> None:
    keys: list[str] = []
    hosts: list[str] = []
    for part in batched(ids):
        for key, host in conn.execute(f"SELECT page_key, page_host FROM documents WHERE id IN ({marks(part)})", part):
            keys.append(key)
            hosts.append(host)
    change.touch("documents", page_keys=keys, hosts=hosts)


def delete_documents(conn: apsw.Connection, change: Change, ids: Sequence[int]) -> int:
    """Hard delete Library documents: their chunks (FTS rows go with them through the triggers),
    links to entities, the document rows and any source left with nothing."""
    _touch_documents(conn, change, ids)
    sources: set[int] = set()
    for part in batched(ids):
        in_ = marks(part)
        sources.update(int(r[0]) for r in conn.execute(f"SELECT source_id FROM documents WHERE id IN ({in_})", part))
        conn.execute(f"DELETE FROM entity_links WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id IN ({in_}))",
                     part)
        conn.execute(f"DELETE FROM chunks WHERE document_id IN ({in_})", part)
    deleted = 0
    for part in batched(ids):
        conn.execute(f"DELETE FROM documents WHERE id IN ({marks(part)})", part)
        deleted += conn.changes()
    _delete_orphan_sources(conn, sources)
    change.touch("chunks")
    change.touch("memory_sources")
    return deleted


def _delete_orphan_sources(conn: apsw.Connection, sources: set[int]) -> None:
    for part in batched(sorted(sources)):
        conn.execute(f"DELETE FROM memory_sources WHERE id IN ({marks(part)})"
                     " AND NOT EXISTS (SELECT 1 FROM chunks x WHERE x.source_id = memory_sources.id)"
                     " AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.source_id = memory_sources.id)",
                     part)


def record_operation(conn: apsw.Connection, change: Change, kind: str, target: str, detail: dict[str, Any]) -> str:
    op = f"op-{uuid.uuid4().hex[:12]}"
    conn.execute("INSERT INTO operations(id, kind, target, detail, created_at) VALUES (?, ?, ?, ?, ?)",
                 (op, kind, target, json.dumps(detail, sort_keys=True), now_iso()))
    change.touch("operations")
    return op


def get_operation(conn: apsw.Connection, op: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT id, kind, target, detail, created_at, undone_at FROM operations WHERE id = ?",
                       (op,)).fetchone()
    if row is None:
        return None
    return {"id": row[0], "kind": row[1], "target": row[2], "detail": json.loads(row[3] or "{}"),
            "created_at": row[4], "undone_at": row[5]}


def operations_starting(conn: apsw.Connection, prefix: str, limit: int = 5) -> list[dict[str, Any]]:
    """The operations whose id starts with ``prefix`` (at most ``limit``: two already say "ambiguous")."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute("SELECT id FROM operations WHERE id LIKE ? ESCAPE '\\' ORDER BY created_at DESC LIMIT ?",
                        (pattern, limit))
    return [op for op in (get_operation(conn, str(r[0])) for r in rows) if op is not None]


def latest_operation(conn: apsw.Connection, kinds: Sequence[str], *, pending_only: bool) -> dict[str, Any] | None:
    """The newest operation of one of ``kinds`` (not undone yet with ``pending_only``)."""
    pending = " AND undone_at IS NULL" if pending_only else ""
    row = conn.execute(f"SELECT id FROM operations WHERE kind IN ({marks(kinds)}){pending}"
                       " ORDER BY created_at DESC, rowid DESC LIMIT 1", list(kinds)).fetchone()
    return None if row is None else get_operation(conn, str(row[0]))


def _touch_chunks(conn: apsw.Connection, change: Change, ids: Sequence[int]) -> None:
    keys: list[str] = []
    hosts: list[str] = []
    for part in batched(ids):
        in_ = marks(part)
        for key, host in conn.execute(f"SELECT page_key, page_host FROM chunks WHERE id IN ({in_})", part):
            keys.append(key)
            hosts.append(host)
    change.touch("chunks", chunk_ids=ids, page_keys=keys, hosts=hosts)


def stamp_invalid(conn: apsw.Connection, change: Change, ids: Sequence[int], op: str) -> int:
    """Hide ``ids`` that are still visible, marking them with ``op``. Returns how many were hidden."""
    when = now_iso()
    hidden = 0
    for part in batched(ids):
        in_ = marks(part)
        conn.execute(f"UPDATE chunks SET invalid_at = ?, invalidated_by = ? WHERE invalid_at IS NULL"
                     f" AND id IN ({in_})", [when, op, *part])
        hidden += conn.changes()
    _touch_chunks(conn, change, ids)
    reelect_canonicals(conn, change, group_ids(conn, ids))
    return hidden


def clear_stamps(conn: apsw.Connection, change: Change, op: str) -> list[int]:
    """Clear exactly the stamps ``op`` set; returns the ids made visible again."""
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE invalidated_by = ?", (op,))]
    conn.execute("UPDATE chunks SET invalid_at = NULL, invalidated_by = NULL WHERE invalidated_by = ?", (op,))
    conn.execute("UPDATE operations SET undone_at = ? WHERE id = ?", (now_iso(), op))
    _touch_chunks(conn, change, ids)
    change.touch("operations")
    return ids


def revert_correction(conn: apsw.Connection, change: Change, op: str, new_id: int, old_id: int) -> int:
    """Undo a correction: hide its revision under ``op`` and bring the revision it replaced back, under
    the memory's id (returned). Refused when the revision changed since: corrected again, or hidden by
    another operation (undo would show what that one hid)."""
    from vodou_desktop.errors import Conflict
    from vodou_desktop.vault.revisions import revision_chain, settle_heads

    row = conn.execute("SELECT superseded_by, invalid_at, invalidated_by FROM chunks WHERE id = ?",
                       (new_id,)).fetchone()
    if row is not None and row[0] is not None:
        raise Conflict(f"memory {new_id} was corrected again since (#{row[0]}); undo that first")
    if row is not None and row[1] is not None and row[2] != op:
        raise Conflict(f"memory {new_id} is hidden by another operation since ({row[2]}); undo that first")
    stamp_invalid(conn, change, [new_id], op)
    conn.execute("UPDATE chunks SET superseded_by = NULL, superseded_at = NULL WHERE id = ? AND superseded_by = ?",
                 (old_id, new_id))
    conn.execute("UPDATE operations SET undone_at = ? WHERE id = ?", (now_iso(), op))
    _touch_chunks(conn, change, [old_id, new_id])
    memory = min(revision_chain(conn, old_id))
    settle_heads(conn, change, [old_id])
    reelect_canonicals(conn, change, group_ids(conn, [old_id, new_id]))
    change.touch("operations")
    return memory


def _covering(kind: str | None, undone_at: str | None) -> bool:
    """Does a cover of an operation of ``kind`` hide its row now? A forget while not undone; a correction
    once undone (its revision is hidden under it)."""
    if kind == CORRECT_FACT_KIND:
        return undone_at is not None
    return kind in FORGET_KINDS and undone_at is None


_COVERS = {"chunks": ("forget_covers", "chunk_id"), "documents": ("document_covers", "document_id")}


def active_cover(conn: apsw.Connection, table: str, row_id: int) -> tuple[str, str] | None:
    """``(at, operation)`` of the earliest operation that covers the row and hides it now (None: none does)."""
    covers, column = _COVERS[table]
    rows = conn.execute(f"SELECT c.at, c.op, o.kind, o.undone_at FROM {covers} c JOIN operations o ON o.id = c.op"
                        f" WHERE c.{column} = ?", (row_id,))
    active = sorted((str(at), str(op)) for at, op, kind, undone in rows if _covering(kind, undone))
    return active[0] if active else None


def add_cover(conn: apsw.Connection, table: str, op: str, row_id: int, at: str) -> None:
    covers, column = _COVERS[table]
    conn.execute(f"INSERT OR IGNORE INTO {covers}(op, {column}, at) VALUES (?, ?, ?)", (op, row_id, at))


def covers_of(conn: apsw.Connection, table: str, row_id: int) -> list[list[str]]:
    """Every ``[operation, at]`` that covers a row, active or not (what sync sends: a set that only grows)."""
    covers, column = _COVERS[table]
    return [[str(op), str(at)] for op, at in conn.execute(
        f"SELECT op, at FROM {covers} WHERE {column} = ? ORDER BY at, op", (row_id,))]


def covered_by(conn: apsw.Connection, table: str, op: str) -> list[int]:
    covers, column = _COVERS[table]
    return [int(r[0]) for r in conn.execute(f"SELECT {column} FROM {covers} WHERE op = ?", (op,))]


def settle_hidden(conn: apsw.Connection, change: Change, table: str, ids: Iterable[int]) -> list[int]:
    """Each row hidden exactly while an operation covers it: ``invalid_at``/``invalidated_by`` from the
    earliest active cover; a row whose operation no longer hides it (an undone forget) and that no other
    one covers is shown again. A row hidden without any operation (an old import) is left as it is.
    Returns the ids whose state changed."""
    assert table in _COVERS
    changed: list[int] = []
    for row_id in sorted(set(ids)):
        row = conn.execute(f"SELECT invalid_at, invalidated_by FROM {table} WHERE id = ?", (row_id,)).fetchone()
        if row is None:
            continue
        want = active_cover(conn, table, row_id)
        if want is not None:
            if (row[0], row[1]) != want:
                conn.execute(f"UPDATE {table} SET invalid_at = ?, invalidated_by = ? WHERE id = ?", (*want, row_id))
                changed.append(row_id)
            continue
        if row[1] is None:
            continue
        explained = conn.execute("SELECT kind, undone_at FROM operations WHERE id = ?", (row[1],)).fetchone()
        if explained is not None and not _covering(*explained):  # its operation no longer hides it, nor another
            conn.execute(f"UPDATE {table} SET invalid_at = NULL, invalidated_by = NULL WHERE id = ?", (row_id,))
            changed.append(row_id)
    if changed:
        if table == "chunks":
            _touch_chunks(conn, change, changed)
            reelect_canonicals(conn, change, group_ids(conn, changed))
        else:
            _touch_documents(conn, change, changed)
    return changed


def active_forget_operations(conn: apsw.Connection, except_op: str, kind: str = FORGET_KIND) -> list[tuple[str, str]]:
    """``(operation id, target)`` of the forgets of ``kind`` (host, tool) that are not undone."""
    rows = conn.execute("SELECT id, target FROM operations WHERE kind = ? AND undone_at IS NULL AND id != ?"
                        " ORDER BY created_at", (kind, except_op))
    return [(str(r[0]), str(r[1])) for r in rows]


def group_ids(conn: apsw.Connection, ids: Sequence[int]) -> set[int]:
    groups: set[int] = set()
    for part in batched(ids):
        in_ = marks(part)
        rows = conn.execute(f"SELECT DISTINCT fact_group FROM chunks WHERE fact_group IS NOT NULL"
                            f" AND id IN ({in_})", part)
        groups.update(int(r[0]) for r in rows)
    return groups


def reelect_canonicals(conn: apsw.Connection, change: Change, groups: Iterable[int]) -> None:
    """Each group's canonical is its best visible member: tier (pinned > first_party > capture >
    import), then the earliest created, then the longest text. A group with no visible member keeps
    its flags (nothing of it is shown)."""
    for group in groups:
        row = conn.execute(
            f"SELECT c.id FROM chunks c JOIN memory_sources s ON s.id = c.source_id WHERE c.fact_group = ?"
            f" AND c.invalid_at IS NULL AND c.superseded_by IS NULL AND c.document_id IS NULL"
            f" ORDER BY {TIER_RANK}, c.created_at, length(c.text) DESC, c.id LIMIT 1", (group,)).fetchone()
        if row is None:
            continue
        conn.execute("UPDATE chunks SET is_canonical = (id = ?) WHERE fact_group = ?", (int(row[0]), group))
        change.touch("chunks", chunk_ids=[int(row[0])])


def lineage(conn: apsw.Connection, seeds: Iterable[int]) -> set[int]:
    """The seeds with every predecessor and successor, transitively (revision chains)."""
    found: set[int] = set()
    frontier = set(seeds)
    while frontier:
        found |= frontier
        nxt: set[int] = set()
        for part in batched(sorted(frontier)):
            in_ = marks(part)
            sql = (f"SELECT predecessor_id, superseded_by FROM chunks WHERE id IN ({in_})"
                   f" UNION SELECT id, NULL FROM chunks"
                   f" WHERE predecessor_id IN ({in_}) OR superseded_by IN ({in_})")
            for a, b in conn.execute(sql, part * 3):
                nxt.update(x for x in (a, b) if x is not None)
        frontier = {int(x) for x in nxt} - found
    return found


def existing_fact_ids(conn: apsw.Connection, ids: Iterable[int]) -> list[int]:
    out: list[int] = []
    for part in batched(sorted(ids)):
        in_ = marks(part)
        out += [int(r[0]) for r in conn.execute(
            f"SELECT id FROM chunks WHERE document_id IS NULL AND id IN ({in_})", part)]
    return out


def delete_facts(conn: apsw.Connection, change: Change, ids: Sequence[int]) -> int:
    """Hard delete: entity links, the chunks (FTS rows go with them through the triggers), then any
    source left with neither chunks nor documents (its title and URL could carry the text)."""
    _touch_chunks(conn, change, ids)
    groups = group_ids(conn, ids)
    sources: set[int] = set()
    for part in batched(ids):
        in_ = marks(part)
        conn.execute(f"DELETE FROM operation_items WHERE sync_id IN (SELECT sync_id FROM chunks WHERE id IN ({in_}))",
                     part)  # the undo journal's items of erased memories (ids only, but they are gone)
        sources.update(int(r[0]) for r in conn.execute(f"SELECT source_id FROM chunks WHERE id IN ({in_})", part))
        conn.execute(f"DELETE FROM entity_links WHERE chunk_id IN ({in_})", part)
        conn.execute(f"UPDATE chunks SET predecessor_id = NULL WHERE predecessor_id IN ({in_})", part)
        conn.execute(f"UPDATE chunks SET superseded_by = NULL WHERE superseded_by IN ({in_})", part)
    deleted = 0
    for part in batched(ids):
        in_ = marks(part)
        conn.execute(f"DELETE FROM chunks WHERE id IN ({in_})", part)
        deleted += conn.changes()
    _delete_orphan_sources(conn, sources)
    reelect_canonicals(conn, change, groups)
    change.touch("memory_sources")
    return deleted
