"""SQL for entities, their aliases and their links to facts (ING-4)."""

from __future__ import annotations

from collections.abc import Iterable

import apsw

from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.writer import Change


def upsert_entity(conn: apsw.Connection, change: Change, name: str) -> int:
    conn.execute("INSERT INTO entities(name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", (name, now_iso()))
    entity_id = scalar(conn, "SELECT id FROM entities WHERE name = ?", (name,))
    change.touch("entities")
    return int(entity_id)


def add_aliases(conn: apsw.Connection, change: Change, entity_id: int, aliases: Iterable[str]) -> None:
    for alias in aliases:
        conn.execute("INSERT OR IGNORE INTO entity_aliases(alias, entity_id) VALUES (?, ?)", (alias, entity_id))
    change.touch("entities")


def drop_aliases(conn: apsw.Connection, change: Change, aliases: Iterable[str]) -> None:
    """Aliases that turned out to be common words (seen lowercase) are withdrawn."""
    for alias in aliases:
        conn.execute("DELETE FROM entity_aliases WHERE alias = ?", (alias,))
    change.touch("entities")


def link(conn: apsw.Connection, change: Change, entity_id: int, chunk_ids: Iterable[int]) -> None:
    for chunk_id in chunk_ids:
        conn.execute("INSERT OR IGNORE INTO entity_links(entity_id, chunk_id) VALUES (?, ?)", (entity_id, chunk_id))
    change.touch("entities")


def find_entities(conn: apsw.Connection, name: str) -> list[tuple[int, str]]:
    """Entities whose name or an alias is ``name`` (case-insensitive)."""
    rows = conn.execute(
        "SELECT id, name FROM entities WHERE name = ? COLLATE NOCASE"
        " UNION SELECT e.id, e.name FROM entity_aliases a JOIN entities e ON e.id = a.entity_id"
        " WHERE a.alias = ? COLLATE NOCASE ORDER BY 2",
        (name, name),
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def all_entities(conn: apsw.Connection) -> list[tuple[int, str, list[str]]]:
    rows = conn.execute(
        "SELECT e.id, e.name, group_concat(a.alias, '|') FROM entities e"
        " LEFT JOIN entity_aliases a ON a.entity_id = e.id GROUP BY e.id ORDER BY e.name"
    )
    return [(int(r[0]), str(r[1]), sorted(str(r[2]).split("|")) if r[2] else []) for r in rows]
