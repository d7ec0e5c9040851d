"""SQL for the undo journal: every reversible action on memories is one row of ``operations``, and
what it changed, rows of ``operation_items`` (by the memories' global ids, never their text).

Actions: the forgets of ``retraction`` (a memory, many, a site, a tool, a document), a correction
(``correct_fact``), a move of one or many memories (``move_facts``), a pin or unpin of one or many
(``pin_facts``) and an import (``import``). Undoing a move or an import hides what it wrote under an
operation of its own (``undo_move``, ``undo_import``): a forget that only it covers, so that undoing
something else never brings those memories back, and every device reaches the same state. The items
of moves, pins and imports stay on the computer that made them (they do not sync): such an action is
undone there. Erase is final: it is journaled (``erase_*``) only so that it can say so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import apsw

from vodou_desktop.errors import Conflict, InvalidInput, NotFound
from vodou_desktop.vault import query as q
from vodou_desktop.vault import retraction as r
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.vault.connection import id_array
from vodou_desktop.vault.facts import GLOBAL_KINDS, clean_project
from vodou_desktop.vault.query import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.revisions import correct_fact, current_id, move_fact, revision_chain, set_pinned, settle_heads
from vodou_desktop.vault.writer import Change

MOVE_FACTS_KIND = "move_facts"
PIN_FACTS_KIND = "pin_facts"
IMPORT_KIND = "import"
UNDO_MOVE_KIND = r.UNDO_MOVE_KIND  # hides the revisions an undone move wrote; its target is the move
UNDO_IMPORT_KIND = r.UNDO_IMPORT_KIND  # hides what an undone import added; its target is the import
ACTION_KINDS = (*r.UNDOABLE_KINDS, MOVE_FACTS_KIND, PIN_FACTS_KIND, IMPORT_KIND)
FINAL_KINDS = r.ERASE_KINDS
INVERSE_KINDS = (UNDO_MOVE_KIND, UNDO_IMPORT_KIND)
LOCAL_ITEM_KINDS = (MOVE_FACTS_KIND, PIN_FACTS_KIND, IMPORT_KIND)  # undone from their items, kept here only


def _one(conn: apsw.Connection, sql: str, params: Sequence[Any]) -> Any:
    """The one row ``sql`` finds (its callers name a row they know exists)."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None, sql
    return row


# -- ids ----------------------------------------------------------------------------------------------

def sync_ids_of(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = conn.execute("SELECT id, sync_id FROM chunks WHERE document_id IS NULL AND id IN carray(?)",
                        (id_array(ids),))
    return {int(i): str(s) for i, s in rows}


def row_ids_of(conn: apsw.Connection, sync_ids: Sequence[str]) -> dict[str, int]:
    if not sync_ids:
        return {}
    rows = conn.execute("SELECT sync_id, id FROM chunks WHERE document_id IS NULL AND sync_id IN"
                        " (SELECT value FROM json_each(?))", (json.dumps(list(sync_ids)),))
    return {str(s): int(i) for s, i in rows}


def memories(conn: apsw.Connection, ids: Iterable[Any]) -> list[int]:
    """``ids`` checked as memories a person can act on: each exists, is a fact (not a Library chunk) and
    is a memory's current revision (an earlier revision is named as such). In the order given, once."""
    out: list[int] = []
    for value in ids:
        try:
            fact_id = int(value)
        except (TypeError, ValueError):
            raise InvalidInput(f"{value!r} is not a memory id") from None
        if fact_id in out:
            continue
        row = conn.execute("SELECT superseded_by FROM chunks WHERE id = ? AND document_id IS NULL",
                           (fact_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {fact_id}")
        if row[0] is not None:
            current = current_id(conn, fact_id)
            if current in revision_chain(conn, fact_id):
                raise Conflict(f"#{fact_id} is an earlier revision of memory #{current}; act on #{current}")
        out.append(fact_id)
    if not out:
        raise InvalidInput("no memories given")
    return out


# -- the journal ----------------------------------------------------------------------------------------

def record_action(conn: apsw.Connection, change: Change, kind: str, target: str, detail: dict[str, Any],
                  items: Iterable[tuple[str, str | None]] = ()) -> str:
    """One journal entry, with what it changed (``(sync_id, before)`` pairs)."""
    op = r.record_operation(conn, change, kind, target, detail)
    conn.executemany("INSERT OR IGNORE INTO operation_items(op, sync_id, before) VALUES (?, ?, ?)",
                     [(op, s, b) for s, b in items])
    return op


def items_of(conn: apsw.Connection, op: str) -> list[tuple[str, str | None]]:
    rows = conn.execute("SELECT sync_id, before FROM operation_items WHERE op = ? ORDER BY sync_id", (op,))
    return [(str(s), b) for s, b in rows]


def has_items(conn: apsw.Connection, op: str) -> bool:
    return conn.execute("SELECT 1 FROM operation_items WHERE op = ? LIMIT 1", (op,)).fetchone() is not None


def mark_undone(conn: apsw.Connection, change: Change, op: str) -> None:
    conn.execute("UPDATE operations SET undone_at = ? WHERE id = ?", (now_iso(), op))
    change.touch("operations")


# -- actions ------------------------------------------------------------------------------------------

def correct(conn: apsw.Connection, change: Change, fact_id: int, text: str, tool: str | None = None) -> dict[str, Any]:
    """Correct one memory in place (it keeps its id); journaled, so undo brings the earlier text back."""
    fact_id = memories(conn, [fact_id])[0]
    correct_fact(conn, change, fact_id, text)
    detail: dict[str, Any] = {"facts": 1, "replaces": _predecessor(conn, fact_id), **({"tool": tool} if tool else {})}
    op = r.record_operation(conn, change, r.CORRECT_FACT_KIND, str(fact_id), detail)
    revision = int(_one(conn, "SELECT revision FROM chunks WHERE id = ?", (fact_id,))[0])
    return {"op": op, "id": fact_id, "revision": revision}


def known_projects(conn: apsw.Connection) -> set[str]:
    """Projects that exist: named in the projects list, or holding a memory (forgotten or earlier ones too)."""
    names = {str(row[0]) for row in conn.execute("SELECT name FROM projects")}
    every = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)
    return names | set(q.project_counts(conn, every).projects)


def move(conn: apsw.Connection, change: Change, ids: Sequence[int], project: str | None, *,
         new_project: bool | None = False) -> dict[str, Any]:
    """Move memories to ``project`` (``None``: make them global), each as its next revision (its id
    kept), as one action. ``project`` must exist unless ``new_project`` says it is started on purpose
    (``None``: the caller lets it be either), so a typo never starts a project. Preferences (always
    global), forgotten memories and those already there are skipped and counted; asked of one memory,
    each of these is a refusal instead."""
    ids = memories(conn, ids)
    project = clean_project(project)
    is_new = project is not None and project not in known_projects(conn)
    if is_new and new_project is False:
        raise NotFound(f"there is no project {project!r}; to start it, say it is a new project (--new)")
    if project is not None and not is_new and new_project is True:
        raise Conflict(f"project {project!r} exists already; move to it without --new")
    skipped = {"preference": 0, "forgotten": 0, "already_there": 0}
    items: list[tuple[str, str | None]] = []
    for fact_id in ids:
        kind, old_project, invalid_at = _one(conn, "SELECT kind, project_id, invalid_at FROM chunks WHERE id = ?",
                                             (fact_id,))
        reason = ("preference" if kind in GLOBAL_KINDS and project is not None else "forgotten"
                  if invalid_at is not None else "already_there" if old_project == project else None)
        if reason is not None and len(ids) == 1:
            move_fact(conn, change, fact_id, project)  # raises the reason in words
        if reason is not None:
            skipped[reason] += 1
            continue
        move_fact(conn, change, fact_id, project)
        kept = _predecessor(conn, fact_id)
        syncs = sync_ids_of(conn, [fact_id, kept])
        items.append((syncs[fact_id], syncs[kept]))
    detail = {"facts": len(items), "project": project, "new_project": is_new}
    op = record_action(conn, change, MOVE_FACTS_KIND, project or "", detail, items) if items else None
    return {"op": op, "project": project, "new_project": is_new, "moved": len(items), "skipped": skipped,
            "ids": ids}


def _predecessor(conn: apsw.Connection, fact_id: int) -> int:
    return int(_one(conn, "SELECT predecessor_id FROM chunks WHERE id = ?", (fact_id,))[0])


def pin(conn: apsw.Connection, change: Change, ids: Sequence[int], pinned: bool) -> dict[str, Any]:
    """Pin (or unpin) memories as one action; those already so are counted, not journaled."""
    ids = memories(conn, ids)
    changed = [i for i in ids if set_pinned(conn, change, i, pinned)]
    syncs = sync_ids_of(conn, changed)
    before = "0" if pinned else "1"
    detail = {"facts": len(changed), "pinned": pinned}
    op = record_action(conn, change, PIN_FACTS_KIND, "pin" if pinned else "unpin", detail,
                       [(syncs[i], before) for i in changed]) if changed else None
    return {"op": op, "pinned": pinned, "changed": len(changed), "unchanged": len(ids) - len(changed), "ids": ids}


def forget(conn: apsw.Connection, change: Change, ids: Sequence[int], tool: str | None = None) -> dict[str, Any]:
    """Hide memories as one operation (undone as one). Every memory named is kept in its items, hidden
    already or not: undoing another forget never brings back one this forget also covers."""
    ids = memories(conn, ids)
    syncs = sync_ids_of(conn, ids)
    detail: dict[str, Any] = {"facts": len(ids), **({"tool": tool} if tool else {})}
    op = record_action(conn, change, r.FORGET_FACTS_KIND, str(len(ids)), detail, [(syncs[i], None) for i in ids])
    hidden = r.stamp_invalid(conn, change, ids, op)
    return {"op": op, "facts_hidden": hidden, "already_hidden": len(ids) - hidden, "ids": ids}


def record_import(conn: apsw.Connection, change: Change, fact_ids: Iterable[int], what: str) -> str | None:
    """Journal an import that added ``fact_ids`` (one entry, undone as one); their revision chains are
    shown under their first ids, as everywhere. ``None`` when it added nothing."""
    ids = sorted(set(fact_ids))
    if not ids:
        return None
    settle_heads(conn, change, ids)
    syncs = sync_ids_of(conn, ids)
    return record_action(conn, change, IMPORT_KIND, what, {"facts": len(syncs)}, [(s, None) for s in syncs.values()])


# -- undo -----------------------------------------------------------------------------------------------

def undo_move(conn: apsw.Connection, change: Change, op: str) -> dict[str, Any]:
    """Each memory the move wrote a revision of goes back to the revision before it (its id kept),
    unless it changed since (edited again, or hidden by another operation): those are left, counted."""
    pairs = _items_here(conn, op, "move")
    rows = row_ids_of(conn, [s for pair in pairs for s in pair if s is not None])
    back: list[tuple[int, int]] = []
    for new_sync, old_sync in pairs:
        new, old = rows.get(new_sync), rows.get(old_sync or "")
        if new is None or old is None:
            continue
        state = _one(conn, "SELECT superseded_by, invalid_at FROM chunks WHERE id = ?", (new,))
        if state[0] is None and state[1] is None:
            back.append((new, old))
    if back:
        inverse = r.record_operation(conn, change, UNDO_MOVE_KIND, op, {"facts": len(back)})
        r.stamp_invalid(conn, change, [new for new, _ in back], inverse)
        for new, old in back:
            conn.execute("UPDATE chunks SET superseded_by = NULL, superseded_at = NULL WHERE id = ?"
                         " AND superseded_by = ?", (old, new))
        settle_heads(conn, change, [old for _, old in back])
        r.reelect_canonicals(conn, change, r.group_ids(conn, [new for new, _ in back]))
    mark_undone(conn, change, op)
    return {"op": op, "facts_restored": len(back), "facts_changed_since": len(pairs) - len(back)}


def undo_pin(conn: apsw.Connection, change: Change, op: str) -> dict[str, Any]:
    items = _items_here(conn, op, "pin")
    rows = row_ids_of(conn, [s for s, _ in items])
    restored = 0
    for sync_id, before in items:
        if sync_id in rows:  # corrected since: the memory is its current revision
            restored += set_pinned(conn, change, current_id(conn, rows[sync_id]), before == "1")
    mark_undone(conn, change, op)
    return {"op": op, "facts_restored": restored, "facts_changed_since": len(items) - restored}


def undo_import(conn: apsw.Connection, change: Change, op: str) -> dict[str, Any]:
    """Hide every memory the import added that is still shown (as a forget does; erase deletes)."""
    covered = sorted(_cover(conn, op, exact=False))
    inverse = r.record_operation(conn, change, UNDO_IMPORT_KIND, op, {"facts": len(covered)})
    hidden = r.stamp_invalid(conn, change, covered, inverse)
    mark_undone(conn, change, op)
    return {"op": op, "facts_hidden": hidden, "facts_restored": 0}


def _items_here(conn: apsw.Connection, op: str, what: str) -> list[tuple[str, str | None]]:
    items = items_of(conn, op)
    if not items:
        raise Conflict(f"this {what} was made on another computer: undo it there")
    return items


def _cover(conn: apsw.Connection, items_op: str, *, exact: bool) -> set[int]:
    """The rows the items of ``items_op`` name: a selection forget's memories or an import's (as their
    current revisions), or, ``exact``, the very revisions an undone move wrote."""
    rows = list(conn.execute("SELECT c.id, c.superseded_by FROM operation_items i JOIN chunks c"
                             " ON c.sync_id = i.sync_id WHERE i.op = ?", (items_op,)))
    return {int(i) if exact or by is None else current_id(conn, int(i)) for i, by in rows}


def covering(conn: apsw.Connection, ids: Sequence[int], except_op: str) -> dict[str, list[int]]:
    """The journal's own active forgets (a selection, an undone import or move) that cover some of
    ``ids``: operation → the ids it covers. (Site and tool forgets cover by their target.)"""
    if not ids:
        return {}
    wanted = set(ids)
    out: dict[str, list[int]] = {}
    rows = conn.execute("SELECT id, kind, target FROM operations WHERE undone_at IS NULL AND id != ?"
                        " AND kind IN (?, ?, ?) ORDER BY created_at, rowid",
                        (except_op, r.FORGET_FACTS_KIND, UNDO_IMPORT_KIND, UNDO_MOVE_KIND))
    for other, kind, target in list(rows):
        items_op = str(other) if kind == r.FORGET_FACTS_KIND else str(target)
        hit = sorted(_cover(conn, items_op, exact=kind == UNDO_MOVE_KIND) & wanted)
        if hit:
            out[str(other)] = hit
    return out
