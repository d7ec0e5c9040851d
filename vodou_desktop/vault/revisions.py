"""Editing a fact without losing its past: corrections make a new revision, pins re-tier a copy.

A correction never rewrites text in place: the new revision is a new row whose ``predecessor_id``
is the old one, and the old row is superseded by it (so readers never see it, and the memory
browser can still show it as history "never recalled"). Pinning points the fact at a copy of its
source with tier ``pinned`` — stamped by the one provenance writer — and remembers the original,
so unpinning restores the exact provenance.
"""

from __future__ import annotations

from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import scalar
from vodou_desktop.vault.facts import GLOBAL_KINDS, clean_project, insert_fact, set_page_link
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

_FACT = ("SELECT text, kind, source_id, project_id, scope, valid_at, valid_precision, revision, fact_group,"
         " is_canonical, page_url, page_set_by, superseded_by, invalid_at, pinned_from FROM chunks"
         " WHERE id = ? AND document_id IS NULL")


def _load(conn: apsw.Connection, fact_id: int) -> tuple:  # type: ignore[type-arg]
    row = conn.execute(_FACT, (fact_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {fact_id}")
    return tuple(row)


def correct_fact(conn: apsw.Connection, change: Change, fact_id: int, text: str) -> int:
    """Write ``text`` as the next revision of ``fact_id``; returns the new revision's id."""
    (old_text, kind, source_id, project, scope, valid_at, precision, revision, group, canonical,
     page_url, page_set_by, superseded_by, invalid_at, _pinned) = _load(conn, fact_id)
    if superseded_by is not None:
        raise Conflict(f"memory {fact_id} was already replaced by #{superseded_by}; correct that one")
    if invalid_at is not None:
        raise Conflict(f"memory {fact_id} is forgotten; undo the forget before correcting it")
    # the new revision takes the old one's place in its conversation
    thread, seq = (scalar(conn, f"SELECT {col} FROM chunks WHERE id = ?", (fact_id,))
                   for col in ("thread_id", "thread_seq"))
    new_id = insert_fact(conn, change, text=text, source_id=source_id, kind=kind, project=project, scope=scope,
                         valid_at=valid_at, valid_precision=precision, predecessor_id=fact_id,
                         revision=int(revision) + 1, thread_id=thread, thread_seq=seq, infer_thread=False)
    if page_set_by == "manual" and page_url:
        set_page_link(conn, change, new_id, page_url, "manual")
    conn.execute("UPDATE chunks SET fact_group = ?, is_canonical = ? WHERE id = ?", (group, canonical, new_id))
    conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (new_id, now_iso(), fact_id))
    change.touch("chunks", chunk_ids=[fact_id, new_id])
    return new_id


def move_fact(conn: apsw.Connection, change: Change, fact_id: int, project: str | None) -> int:
    """Move a fact to ``project`` (``None``: global) as its next revision, so the move stays in its
    history: the old revision keeps the old project and is superseded. Returns the new id."""
    (text, kind, source_id, old_project, scope, valid_at, precision, revision, group, canonical,
     page_url, page_set_by, superseded_by, invalid_at, pinned_from) = _load(conn, fact_id)
    if kind in GLOBAL_KINDS:
        raise InvalidInput(f"memory {fact_id} is a {kind}: preferences are always global and cannot be moved")
    if superseded_by is not None:
        raise Conflict(f"memory {fact_id} was already replaced by #{superseded_by}; move that one")
    if invalid_at is not None:
        raise Conflict(f"memory {fact_id} is forgotten; undo the forget before moving it")
    project = clean_project(project)
    if project == old_project:
        raise Conflict(f"memory {fact_id} is already {'in ' + project if project else 'global'}")
    new_id = insert_fact(conn, change, text=text, source_id=source_id, kind=kind, project=project, scope=scope,
                         valid_at=valid_at, valid_precision=precision, predecessor_id=fact_id,
                         revision=int(revision) + 1)
    if page_set_by == "manual" and page_url:
        set_page_link(conn, change, new_id, page_url, "manual")
    conn.execute("UPDATE chunks SET fact_group = ?, is_canonical = ?, pinned_from = ?,"
                 " embedding = (SELECT embedding FROM chunks WHERE id = ?),"
                 " embed_model = (SELECT embed_model FROM chunks WHERE id = ?) WHERE id = ?",
                 (group, canonical, pinned_from, fact_id, fact_id, new_id))
    conn.execute("INSERT INTO entity_links(entity_id, chunk_id) SELECT entity_id, ? FROM entity_links"
                 " WHERE chunk_id = ?", (new_id, fact_id))
    conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (new_id, now_iso(), fact_id))
    change.touch("chunks", chunk_ids=[fact_id, new_id])
    return new_id


def set_pinned(conn: apsw.Connection, change: Change, fact_id: int, pinned: bool) -> bool:
    """Pin or unpin; returns whether anything changed."""
    row = _load(conn, fact_id)
    source_id, pinned_from = row[2], row[14]
    if pinned == (pinned_from is not None):
        return False
    if pinned:
        src: list[Any] = list(conn.execute(
            "SELECT kind, source_url, title, tool, batch_id FROM memory_sources WHERE id = ?", (source_id,)
        ).fetchall()[0])
        copy = stamp_source(conn, change, kind=src[0], tier="pinned", url=src[1], title=src[2], tool=src[3],
                            batch_id=src[4])
        conn.execute("UPDATE chunks SET source_id = ?, pinned_from = ? WHERE id = ?", (copy, source_id, fact_id))
    else:
        conn.execute("UPDATE chunks SET source_id = ?, pinned_from = NULL WHERE id = ?", (pinned_from, fact_id))
        conn.execute("DELETE FROM memory_sources WHERE id = ? AND NOT EXISTS"
                     " (SELECT 1 FROM chunks WHERE source_id = memory_sources.id)", (source_id,))
    change.touch("chunks", chunk_ids=[fact_id])
    return True
