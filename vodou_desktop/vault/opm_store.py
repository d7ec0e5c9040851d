"""SQL for operator memory (``operator_memory`` + ``operator_memory_history``).

The lifecycle rules (categories, ceilings, expiry, dedupe) live in ``governance/opm.py``; this
module only reads and writes rows. Two tables, two roles:

- ``operator_memory`` holds the current revision of each memory. It is the ONLY recall source:
  ``recall_rows`` is the one function that feeds the prompt and it never names the history table.
- ``operator_memory_history`` keeps exact superseded revisions for correction lineage, the owner's
  view and export. Recall never reads it.

Times are ISO 8601 UTC strings with microseconds (``vault.clock.to_iso``), so SQL compares them as
text in time order. Within a lineage, revisions are numbered 1, 2, …; a current row's
``predecessor`` is the revision it replaced and a history row's ``successor_revision`` the one
that replaced it.
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

import apsw

from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.secret_filter import scrub
from vodou_desktop.vault.writer import Change

TABLE = "operator_memory"
HISTORY_TABLE = "operator_memory_history"
SOURCE = "opm"  # the source kind of operator memory (the secret filter's setting)


@dataclass(frozen=True)
class MemoryRow:
    """The current revision of one operator memory."""

    id: str
    category: str
    content: str
    canonical_key: str
    salience: int
    revision: int
    predecessor: int | None
    source_ref: str
    original_source_ref: str
    reauthorized_at: str | None
    expires_at: str | None
    last_used_at: str | None
    created_at: str
    updated_at: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HistoryRow:
    """One exact superseded revision, kept for lineage only (never recalled)."""

    id: int
    memory_id: str
    category: str
    revision: int
    content: str
    source_ref: str
    successor_revision: int
    superseded_at: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


MEMORY_COLUMNS = (
    "id, category, content, canonical_key, salience, revision, predecessor, source_ref,"
    " original_source_ref, reauthorized_at, expires_at, last_used_at, created_at, updated_at"
)
HISTORY_COLUMNS = "id, memory_id, category, revision, content, source_ref, successor_revision, superseded_at"


def _memory(row: apsw.SQLiteValues) -> MemoryRow:
    values: list[Any] = list(row)
    return MemoryRow(*values)


def _history(row: apsw.SQLiteValues) -> HistoryRow:
    values: list[Any] = list(row)
    return HistoryRow(*values)


# -- reads for the owner (never the prompt) ------------------------------------------------------

def get_row(conn: apsw.Connection, memory_id: str) -> MemoryRow | None:
    row = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM {TABLE} WHERE id = ?", (memory_id,)).fetchone()
    return None if row is None else _memory(row)


def find_canonical(conn: apsw.Connection, category: str, canonical_key: str) -> MemoryRow | None:
    """The row of ``category`` whose normalised content is ``canonical_key``, if any."""
    row = conn.execute(
        f"SELECT {MEMORY_COLUMNS} FROM {TABLE} WHERE category = ? AND canonical_key = ? ORDER BY created_at LIMIT 1",
        (category, canonical_key),
    ).fetchone()
    return None if row is None else _memory(row)


def count_in_category(conn: apsw.Connection, category: str) -> int:
    return int(scalar(conn, f"SELECT count(*) FROM {TABLE} WHERE category = ?", (category,)))


def list_rows(conn: apsw.Connection) -> list[MemoryRow]:
    """Every current row, expired ones included (the owner sees all of them)."""
    sql = f"SELECT {MEMORY_COLUMNS} FROM {TABLE} ORDER BY salience DESC, updated_at DESC, id"
    return [_memory(r) for r in conn.execute(sql)]


def history_rows(conn: apsw.Connection, memory_id: str | None = None) -> list[HistoryRow]:
    if memory_id is None:
        rows = conn.execute(f"SELECT {HISTORY_COLUMNS} FROM {HISTORY_TABLE} ORDER BY memory_id, revision")
    else:
        rows = conn.execute(
            f"SELECT {HISTORY_COLUMNS} FROM {HISTORY_TABLE} WHERE memory_id = ? ORDER BY revision", (memory_id,)
        )
    return [_history(r) for r in rows]


def export_snapshot(conn: apsw.Connection) -> tuple[list[MemoryRow], list[HistoryRow]]:
    """Current and historical rows. Call inside ONE read transaction (``Vault.read``) so that a
    correction committed in between cannot produce a split view."""
    return list_rows(conn), history_rows(conn)


# -- the prompt's only source ----------------------------------------------------------------------

RECALL_SELECT = (
    f"SELECT {MEMORY_COLUMNS} FROM {TABLE}"
    " WHERE expires_at IS NULL OR expires_at > :now"
    " ORDER BY salience DESC, updated_at DESC, id LIMIT :limit"
)
RECALL_TOUCH = f"UPDATE {TABLE} SET last_used_at = :now WHERE id = :id"


def recall_rows(conn: apsw.Connection, change: Change, now: str, limit: int) -> list[MemoryRow]:
    """Unexpired current rows, by salience then recency, at most ``limit``; marks them used.

    Expiry is filtered in SQL before last-use is written, so an expired row is never touched.
    Runs in a write transaction: the selection and its last-use stamps land together.
    """
    picked = [_memory(r) for r in conn.execute(RECALL_SELECT, {"now": now, "limit": limit})]
    for row in picked:
        conn.execute(RECALL_TOUCH, {"now": now, "id": row.id})
    if picked:
        change.touch(TABLE)
    return [_with_last_used(row, now) for row in picked]


def _with_last_used(row: MemoryRow, now: str) -> MemoryRow:
    data = asdict(row)
    data["last_used_at"] = now
    return MemoryRow(**data)


# -- writes ------------------------------------------------------------------------------------------

def canonical_key(content: str) -> str:
    """Content as dedupe sees it: NFKC, case-folded, punctuation dropped, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", content).casefold()
    kept = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return " ".join(kept.split())


def _scrubbed(conn: apsw.Connection, change: Change, content: str, key: str) -> tuple[str, str]:
    """DATA-8: the content as it may be stored, and its key (the key of the text as stored)."""
    clean = scrub(conn, change, content, SOURCE)
    return (content, key) if clean == content else (clean, canonical_key(clean))


def insert_row(conn: apsw.Connection, change: Change, row: MemoryRow) -> None:
    content, key = _scrubbed(conn, change, row.content, row.canonical_key)
    row = replace(row, content=content, canonical_key=key)
    marks = ",".join("?" * len(MEMORY_COLUMNS.split(",")))
    conn.execute(f"INSERT INTO {TABLE}({MEMORY_COLUMNS}) VALUES ({marks})", tuple(asdict(row).values()))
    change.touch(TABLE)


def archive_and_revise(conn: apsw.Connection, change: Change, old: MemoryRow, *, content: str,
                       canonical_key: str, source_ref: str, now: str, expires_at: str | None) -> None:
    """Keep the exact prior revision in history, then write the next revision in place.

    The id stays; revision goes up by one and ``predecessor`` names the archived revision.
    """
    successor = old.revision + 1
    content, canonical_key = _scrubbed(conn, change, content, canonical_key)
    conn.execute(
        f"INSERT INTO {HISTORY_TABLE}(memory_id, category, revision, content, source_ref, successor_revision,"
        " superseded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (old.id, old.category, old.revision, old.content, old.source_ref, successor, now),
    )
    conn.execute(
        f"UPDATE {TABLE} SET content = ?, canonical_key = ?, revision = ?, predecessor = ?, source_ref = ?,"
        " expires_at = ?, last_used_at = NULL, updated_at = ? WHERE id = ?",
        (content, canonical_key, successor, old.revision, source_ref, expires_at, now, old.id),
    )
    change.touch(TABLE)
    change.touch(HISTORY_TABLE)


def reauthorize_row(conn: apsw.Connection, change: Change, memory_id: str, *, source_ref: str, now: str,
                    expires_at: str | None) -> None:
    """New source ref, renewed expiry, last-use cleared; content, revision and original provenance kept."""
    conn.execute(
        f"UPDATE {TABLE} SET source_ref = ?, reauthorized_at = ?, expires_at = ?, last_used_at = NULL,"
        " updated_at = ? WHERE id = ?",
        (source_ref, now, expires_at, now, memory_id),
    )
    change.touch(TABLE)


@contextlib.contextmanager
def _secure_delete(conn: apsw.Connection) -> Iterator[None]:
    """Overwrite freed content during this write; the connection's own setting comes back after."""
    previous = int(scalar(conn, "PRAGMA secure_delete"))
    conn.execute("PRAGMA secure_delete = 1")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA secure_delete = {previous}")


def delete_lineage(conn: apsw.Connection, change: Change, memory_id: str) -> tuple[int, int]:
    """Delete the current row and every archived revision of ``memory_id``: (current, history) counts."""
    with _secure_delete(conn):
        return _delete_lineage(conn, change, memory_id)


def _delete_lineage(conn: apsw.Connection, change: Change, memory_id: str) -> tuple[int, int]:
    conn.execute(f"DELETE FROM {HISTORY_TABLE} WHERE memory_id = ?", (memory_id,))
    n_history = conn.changes()
    conn.execute(f"DELETE FROM {TABLE} WHERE id = ?", (memory_id,))
    n_current = conn.changes()
    change.touch(TABLE)
    change.touch(HISTORY_TABLE)
    return n_current, n_history


def delete_all(conn: apsw.Connection, change: Change) -> tuple[int, int]:
    """Delete every current and historical row: (current, history) counts."""
    with _secure_delete(conn):
        return _delete_all(conn, change)


def _delete_all(conn: apsw.Connection, change: Change) -> tuple[int, int]:
    conn.execute(f"DELETE FROM {HISTORY_TABLE}")
    n_history = conn.changes()
    conn.execute(f"DELETE FROM {TABLE}")
    n_current = conn.changes()
    change.touch(TABLE)
    change.touch(HISTORY_TABLE)
    return n_current, n_history
