"""Editing a fact without losing its past or its id: corrections and moves, pins.

A memory keeps its id for its whole life. A correction (or a move to another project) never rewrites
text in place: the current revision moves to a fresh row id and stays there as history, superseded
(so readers never see it, and the memory browser shows it as history "never recalled"), and the new
revision takes the memory's id, its saving time and its place in its conversation. Every revision
chain is shown under its lowest id: the id the memory was first given (``settle_heads`` restores
that after an undo or a merge from another device brings an older revision back).

Moving a row to another id (``relabel``) is local bookkeeping: every reference follows it (revision
links, a superseded fact's winner, entity links, the operations that name it), the keyword index
follows through the trigger of migration ``0007``, and sync never sees it (a row's global id,
``sync_id``, moves with its content).

Pinning points the fact at a copy of its source with tier ``pinned`` — stamped by the one provenance
writer — and remembers the original, so unpinning restores the exact provenance.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import id_array, scalar
from vodou_desktop.vault.facts import GLOBAL_KINDS, clean_project, insert_fact, set_page_link
from vodou_desktop.vault.retraction import CORRECT_FACT_KIND, FORGET_FACT_KIND
from vodou_desktop.vault.schema import SYNC_CAPTURE_SETTING
from vodou_desktop.vault.sources import stamp_source
from vodou_desktop.vault.writer import Change

_FACT = ("SELECT text, kind, source_id, project_id, scope, valid_at, valid_precision, revision, fact_group,"
         " is_canonical, page_url, page_set_by, superseded_by, invalid_at, pinned_from, created_at, thread_id,"
         " thread_seq FROM chunks WHERE id = ? AND document_id IS NULL")
# Operations whose target (and a correction's ``replaces``) is a row id: they follow a relabelled row.
ROW_TARGET_KINDS = (FORGET_FACT_KIND, CORRECT_FACT_KIND)


def _load(conn: apsw.Connection, fact_id: int) -> tuple:  # type: ignore[type-arg]
    row = conn.execute(_FACT, (fact_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {fact_id}")
    return tuple(row)


def _editable(conn: apsw.Connection, fact_id: int, verb: str, superseded_by: int | None,
              invalid_at: str | None) -> None:
    if superseded_by is not None:
        current = current_id(conn, fact_id)
        if current in revision_chain(conn, fact_id):
            raise Conflict(f"#{fact_id} is an earlier revision of memory #{current}; {verb} #{current}")
        raise Conflict(f"memory {fact_id} was already replaced by #{current}; {verb} that one")
    if invalid_at is not None:
        raise Conflict(f"memory {fact_id} is forgotten; undo the forget before you {verb} it")


def correct_fact(conn: apsw.Connection, change: Change, fact_id: int, text: str) -> int:
    """Write ``text`` as the next revision of memory ``fact_id``, which keeps its id; returns it."""
    return _revise(conn, change, fact_id, "correct", text=text)


def move_fact(conn: apsw.Connection, change: Change, fact_id: int, project: str | None) -> int:
    """Move a memory to ``project`` (``None``: global) as its next revision, so the move stays in its
    history; the memory keeps its id (returned). The old revision keeps the old project."""
    return _revise(conn, change, fact_id, "move", project=clean_project(project))


_KEEP: Any = object()


def _revise(conn: apsw.Connection, change: Change, fact_id: int, verb: str, *, text: Any = _KEEP,
            project: Any = _KEEP) -> int:
    (old_text, kind, source_id, old_project, scope, valid_at, precision, revision, group, canonical,
     page_url, page_set_by, superseded_by, invalid_at, pinned_from, created_at, thread, seq) = _load(conn, fact_id)
    if verb == "move" and kind in GLOBAL_KINDS:
        raise InvalidInput(f"memory {fact_id} is a {kind}: preferences are always global and cannot be moved")
    _editable(conn, fact_id, verb, superseded_by, invalid_at)
    if verb == "move" and project == old_project:
        raise Conflict(f"memory {fact_id} is already {'in ' + project if project else 'global'}")
    kept = free_id(conn)
    relabel(conn, change, fact_id, kept)  # the current revision becomes history under a fresh id
    insert_fact(conn, change, text=old_text if text is _KEEP else text, source_id=source_id, kind=kind,
                project=old_project if project is _KEEP else project, scope=scope, valid_at=valid_at,
                valid_precision=precision, created_at=created_at, predecessor_id=kept, revision=int(revision) + 1,
                thread_id=thread, thread_seq=seq, infer_thread=False, fact_id=fact_id)
    if page_set_by == "manual" and page_url:
        set_page_link(conn, change, fact_id, page_url, "manual")
    conn.execute("UPDATE chunks SET fact_group = ?, is_canonical = ? WHERE id = ?", (group, canonical, fact_id))
    if pinned_from is not None:  # the new revision is pinned as the old one was (the pin travels too)
        conn.execute("UPDATE chunks SET pinned_from = ? WHERE id = ?", (pinned_from, fact_id))
    if text is _KEEP:  # the same words: the same vector and the same entities
        conn.execute("UPDATE chunks SET embedding = (SELECT embedding FROM chunks WHERE id = ?),"
                     " embed_model = (SELECT embed_model FROM chunks WHERE id = ?) WHERE id = ?",
                     (kept, kept, fact_id))
        conn.execute("INSERT INTO entity_links(entity_id, chunk_id) SELECT entity_id, ? FROM entity_links"
                     " WHERE chunk_id = ?", (fact_id, kept))
    at = now_iso()
    conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (fact_id, at, kept))
    # A revision of it undone earlier (hidden, still a child of it) is replaced by this one too: what
    # every other device derives from the merged state (sync_store.normalize), said here at once.
    siblings = [int(r[0]) for r in conn.execute(
        "SELECT id FROM chunks WHERE predecessor_id = ? AND id != ? AND superseded_by IS NULL", (kept, fact_id))]
    for sibling in siblings:
        conn.execute("UPDATE chunks SET superseded_by = ?, superseded_at = ? WHERE id = ?", (fact_id, at, sibling))
    change.touch("chunks", chunk_ids=[fact_id, kept, *siblings])
    return fact_id


# -- ids: a memory keeps its own -------------------------------------------------------------------

def free_id(conn: apsw.Connection) -> int:
    """An id no row has (the next one, as SQLite would give)."""
    return int(scalar(conn, "SELECT coalesce(max(id), 0) + 1 FROM chunks"))


@contextlib.contextmanager
def _local_only(conn: apsw.Connection) -> Iterator[None]:
    """Writes in the block are this device's bookkeeping: sync's journal does not record them."""
    was = scalar(conn, "SELECT value FROM settings WHERE key = ?", (SYNC_CAPTURE_SETTING,))
    if was == "1":
        conn.execute("UPDATE settings SET value = '0' WHERE key = ?", (SYNC_CAPTURE_SETTING,))
    try:
        yield
    finally:
        if was == "1":
            conn.execute("UPDATE settings SET value = '1' WHERE key = ?", (SYNC_CAPTURE_SETTING,))


def relabel(conn: apsw.Connection, change: Change, old: int, new: int) -> None:
    """Give the fact row ``old`` the free id ``new``; everything that names the row follows it."""
    if conn.execute("SELECT 1 FROM chunks WHERE id = ?", (new,)).fetchone() is not None:
        raise ValueError(f"id {new} is taken")
    conn.execute("PRAGMA defer_foreign_keys = ON")  # references are moved one statement after the row
    with _local_only(conn):
        conn.execute("UPDATE chunks SET id = ? WHERE id = ? AND document_id IS NULL", (new, old))
        if not conn.changes():
            raise NotFound(f"no memory with id {old}")
        conn.execute("UPDATE chunks SET predecessor_id = ? WHERE predecessor_id = ?", (new, old))
        conn.execute("UPDATE chunks SET superseded_by = ? WHERE superseded_by = ?", (new, old))
        conn.execute("UPDATE entity_links SET chunk_id = ? WHERE chunk_id = ?", (new, old))
        conn.execute("UPDATE forget_covers SET chunk_id = ? WHERE chunk_id = ?", (new, old))
        kinds = ",".join("?" * len(ROW_TARGET_KINDS))
        conn.execute(f"UPDATE operations SET target = ? WHERE kind IN ({kinds}) AND target = ?",
                     (str(new), *ROW_TARGET_KINDS, str(old)))
        conn.execute("UPDATE operations SET detail = json_set(detail, '$.replaces', ?) WHERE kind = ?"
                     " AND json_valid(detail) AND json_extract(detail, '$.replaces') = ?",
                     (new, CORRECT_FACT_KIND, old))
    change.touch("chunks", chunk_ids=[old, new])
    change.touch("operations")


def swap_ids(conn: apsw.Connection, change: Change, a: int, b: int) -> None:
    """Exchange the rows at ids ``a`` and ``b``; the place in a conversation stays with the id."""
    sql = "SELECT thread_id, thread_seq FROM chunks WHERE id = ?"
    places = {i: tuple(conn.execute(sql, (i,)).fetchone() or (None, None)) for i in (a, b)}
    spare = free_id(conn)
    relabel(conn, change, a, spare)
    relabel(conn, change, b, a)
    relabel(conn, change, spare, b)
    for i in (a, b):
        conn.execute("UPDATE chunks SET thread_id = ?, thread_seq = ? WHERE id = ?", (*places[i], i))


def revision_chain(conn: apsw.Connection, fact_id: int) -> set[int]:
    """Every revision of the memory ``fact_id`` belongs to (linked by ``predecessor_id`` either way)."""
    found: set[int] = set()
    frontier = {fact_id}
    while frontier:
        found |= frontier
        ids = id_array(sorted(frontier))
        rows = conn.execute("SELECT predecessor_id FROM chunks WHERE id IN carray(?) AND predecessor_id IS NOT NULL"
                            " UNION SELECT id FROM chunks WHERE predecessor_id IN carray(?)", (ids, ids))
        frontier = {int(r[0]) for r in rows} - found
    return found


def head_of(conn: apsw.Connection, chain: set[int]) -> int | None:
    """The chain's current revision: the one no other revision replaced (a visible one first; of two
    unsettled forks, the higher revision)."""
    ids = id_array(sorted(chain))
    row = conn.execute("SELECT id FROM chunks WHERE id IN carray(?) AND (superseded_by IS NULL"
                       " OR superseded_by NOT IN carray(?)) ORDER BY invalid_at IS NOT NULL, revision DESC, sync_id"
                       " LIMIT 1", (ids, ids)).fetchone()
    return None if row is None else int(row[0])


def settle_heads(conn: apsw.Connection, change: Change, ids: Iterable[int]) -> int:
    """Show each revision chain among ``ids`` under its lowest id (the memory's own): the current
    revision takes it. Returns how many chains were renumbered."""
    seen: set[int] = set()
    moved = 0
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    # only memories with more than one revision can be shown under the wrong id: one statement finds them
    revised = {int(r[0]) for r in conn.execute(
        "SELECT id FROM chunks WHERE id IN carray(?) AND (predecessor_id IS NOT NULL OR EXISTS"
        " (SELECT 1 FROM chunks x WHERE x.predecessor_id = chunks.id))", (id_array(wanted),))}
    for fact_id in sorted(revised):
        if fact_id in seen or conn.execute("SELECT 1 FROM chunks WHERE id = ? AND document_id IS NULL",
                                           (fact_id,)).fetchone() is None:
            continue
        chain = revision_chain(conn, fact_id)
        seen |= chain
        head = head_of(conn, chain) if len(chain) > 1 else None
        if head is not None and head != min(chain):
            swap_ids(conn, change, head, min(chain))
            moved += 1
    return moved


def current_id(conn: apsw.Connection, fact_id: int) -> int:
    """The memory a row is now shown as: where its ``superseded_by`` links lead (itself when current)."""
    seen = {fact_id}
    current = fact_id
    while (nxt := scalar(conn, "SELECT superseded_by FROM chunks WHERE id = ?", (current,))) is not None:
        if int(nxt) in seen:
            break
        current = int(nxt)
        seen.add(current)
    return current


def shown_id(conn: apsw.Connection, row: object) -> str:
    """The id a person knows a memory by, for a row of any of its revisions (the row's own when gone)."""
    try:
        fact_id = int(str(row))
    except ValueError:
        return str(row)
    exists = conn.execute("SELECT 1 FROM chunks WHERE id = ? AND document_id IS NULL", (fact_id,)).fetchone()
    return str(min(revision_chain(conn, fact_id))) if exists else str(fact_id)


# -- pins ------------------------------------------------------------------------------------------

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
